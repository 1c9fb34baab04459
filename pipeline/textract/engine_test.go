package textract

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// The engine sends the page image's bytes and returns the recorded
// answer's lines in order.
func TestEngineRecognizesPageImage(t *testing.T) {
	reply, err := os.ReadFile("testdata/detect_document_text.json")
	if err != nil {
		t.Fatal(err)
	}
	page := []byte("\x89PNG\r\n\x1a\npage pixels")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in := checkRequest(t, r, "DetectDocumentText")
		if doc, _ := in["Document"].(map[string]any); doc["Bytes"] != base64.StdEncoding.EncodeToString(page) {
			t.Errorf("document %v, want the image's bytes", in["Document"])
		}
		w.Write(reply)
	}))
	defer srv.Close()
	img := filepath.Join(t.TempDir(), "page-000001.png")
	if err := os.WriteFile(img, page, 0o644); err != nil {
		t.Fatal(err)
	}
	e := &Engine{Client: testClient(srv.URL)}
	if ok, reason := e.Available(); !ok || e.Name() != "textract" {
		t.Fatalf("available %v (%s), name %s", ok, reason, e.Name())
	}
	text, err := e.Recognize(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	if want := "INVOICE 2024-117\nMüller GmbH, Berlin"; text != want {
		t.Fatalf("text %q, want %q", text, want)
	}
}

// An image over the inline limit fails with the reason, unsent; a
// missing file is an error too.
func TestEngineRefusesWhatTextractCannotTake(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s", r.Header.Get("X-Amz-Target"))
	}))
	defer srv.Close()
	big := filepath.Join(t.TempDir(), "big.png")
	if err := os.WriteFile(big, make([]byte, maxImageBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &Engine{Client: testClient(srv.URL)}
	var failed *steperr.StageFailedError
	if _, err := e.Recognize(context.Background(), big); !errors.As(err, &failed) {
		t.Errorf("over-size image: %v", err)
	}
	if _, err := e.Recognize(context.Background(), filepath.Join(t.TempDir(), "none.png")); err == nil {
		t.Error("missing image: no error")
	}
}
