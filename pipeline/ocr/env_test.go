package ocr_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/ocr"
)

// tesseract gets none of docpipe's credentials: a stand-in prints the
// environment it was given as the text it "recognised".
func TestTesseractGetsNoCredentials(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
	t.Setenv("DOCPIPE_TOKEN", "dashboard-token-value")
	t.Setenv("TESSDATA_PREFIX", "/opt/tessdata")
	dir := t.TempDir()
	fake := filepath.Join(dir, "tesseract")
	script := "#!/bin/sh\nif [ \"$1\" = --list-langs ]; then env | grep -q aws-secret-value && exit 9; printf 'List of available languages:\\neng\\n'; exit 0; fi\nenv\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "page.png")
	if err := os.WriteFile(img, []byte("not read by the stand-in"), 0o644); err != nil {
		t.Fatal(err)
	}
	tess := &ocr.Tesseract{Binary: fake}
	if ok, reason := tess.Available(); !ok {
		t.Fatalf("the stand-in is not available: %s (its language listing saw a credential?)", reason)
	}
	text, err := tess.Recognize(t.Context(), img)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"aws-secret-value", "dashboard-token-value"} {
		if strings.Contains(text, secret) {
			t.Errorf("tesseract was given %q:\n%s", secret, text)
		}
	}
	if !strings.Contains(text, "TESSDATA_PREFIX=/opt/tessdata") || !strings.Contains(text, "OMP_THREAD_LIMIT=1") {
		t.Errorf("tesseract lacks its own variables:\n%s", text)
	}
}
