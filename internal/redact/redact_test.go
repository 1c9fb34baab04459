package redact_test

import (
	"strings"
	"testing"

	"github.com/docpipe/docpipe/internal/redact"
)

func TestURL(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://user:PASSWORD@host/p?api_key=KEY":                 "https://REDACTED@host/p?api_key=REDACTED",
		"https://APIKEY@host/":                                     "https://REDACTED@host/",
		"https://host/x?page=2&token=T&q=cats":                     "https://host/x?page=2&token=REDACTED&q=cats",
		"https://host/?Key=K&SECRET=S&password=P&sig=G":            "https://host/?Key=REDACTED&SECRET=REDACTED&password=REDACTED&sig=REDACTED",
		"https://host/?signature=G&access_token=A&client_secret=C": "https://host/?signature=REDACTED&access_token=REDACTED&client_secret=REDACTED",
		"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20250101&X-Amz-Signature=abc&X-Amz-Security-Token=t": "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&X-Amz-Security-Token=REDACTED",
		"https://host/cb#access_token=A&state=s": "https://host/cb#access_token=REDACTED&state=s",
		"http://localhost:8000/classify":         "http://localhost:8000/classify",
		"https://host/?flag&keyword=go":          "https://host/?flag&keyword=go",
		"::not a url":                            "(unparsable URL)",
	} {
		if got := redact.URL(raw); got != want {
			t.Errorf("URL(%q)\n = %q\nwant %q", raw, got, want)
		}
	}
}

func TestURLNeverKeepsTheSecret(t *testing.T) {
	t.Parallel()
	raw := "https://u:p4ss@h/?apiKey=k3y&aws_access_key_id=AKIAX&refresh-token=r3f"
	got := redact.URL(raw)
	for _, secret := range []string{"p4ss", "k3y", "AKIAX", "r3f"} {
		if strings.Contains(got, secret) {
			t.Errorf("URL(%q) = %q keeps %q", raw, got, secret)
		}
	}
}
