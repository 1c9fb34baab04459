package childenv

import (
	"slices"
	"testing"
)

func TestBuildKeepsOnlyTheBaseAndTheNamed(t *testing.T) {
	t.Parallel()
	parent := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "TZ=UTC",
		"AWS_SECRET_ACCESS_KEY=s3cr3t", "AWS_REGION=eu-west-1", "DOCPIPE_TOKEN=tok",
		"DOCPIPE_WEBHOOK_SECRET=whsec_x", "DOCPIPE_STAGE=parent", "OPENAI_API_KEY=sk", "weird",
	}
	got := build(parent, []string{"OPENAI_API_KEY", "NOT_SET"}, []string{"DOCPIPE_STAGE=redact"})
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "TZ=UTC", "OPENAI_API_KEY=sk", "DOCPIPE_STAGE=redact"}
	if !slices.Equal(got, want) {
		t.Errorf("build = %q\nwant %q", got, want)
	}
}

func TestBuildPassesSecretsOnlyWhenNamed(t *testing.T) {
	t.Parallel()
	got := build([]string{"DOCPIPE_TOKEN=tok", "AWS_PROFILE=x"}, []string{"DOCPIPE_TOKEN"}, nil)
	if !slices.Equal(got, []string{"DOCPIPE_TOKEN=tok"}) {
		t.Errorf("build = %q", got)
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"API_KEY": true, "_x1": true, "1X": false, "A-B": false, "A=B": false, "": false} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}
