package main

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serve relays outcome events like run and work: an upload's completion
// reaches the configured sink without any other process.
func TestServeDeliversOutcomeEvents(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	events := filepath.Join(t.TempDir(), "events.jsonl")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f := &runFlags{app: &app{stdout: io.Discard, stderr: io.Discard, home: home, project: "default"}, concurrency: 2, pdf: "go",
		notify: &notifyFlags{command: "cat >> " + events + " && echo >> " + events}}
	base := startServe(ctx, t, f)

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, err := mw.CreateFormFile("file", "notes.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../samples/docs/notes.md")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(doc)
	mw.Close()
	resp, err := http.Post(base+"/api/uploads", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("upload: %s", resp.Status)
	}
	for {
		got, _ := os.ReadFile(events)
		if strings.Contains(string(got), `"analysis.completed"`) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no analysis.completed event reached the sink; it holds %q", got)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
