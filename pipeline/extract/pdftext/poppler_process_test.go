package pdftext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// toolsOnly puts a PATH in place that holds the real pdftotext and, as
// pdfinfo and sh, scripts that log their call and fail, and returns the
// log's path.
func toolsOnly(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext not installed")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.log")
	if err := os.Symlink(real, filepath.Join(dir, "pdftotext")); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"pdfinfo", "sh"} {
		script := fmt.Sprintf("#!/bin/sh\necho %s >> %s\nexit 1\n", tool, calls)
		if err := os.WriteFile(filepath.Join(dir, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	return calls
}

// A small PDF costs one process: its page count is read here, and
// pdftotext is started directly, with no pdfinfo and no shell.
func TestPopplerSmallDocumentIsOneProcess(t *testing.T) {
	path, texts := generate(t, pdfgen.Options{Pages: 3, Seed: 5})
	calls := toolsOnly(t)
	x := NewPoppler()
	n, err := x.Pages(context.Background(), path)
	if err != nil || n != 3 {
		t.Fatalf("Pages = %d, %v; want 3", n, err)
	}
	us, err := x.Extract(context.Background(), path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if log, _ := os.ReadFile(calls); len(log) > 0 {
		t.Fatalf("small document ran %q", log)
	}
	if len(us) != 3 {
		t.Fatalf("got %d units, want 3", len(us))
	}
	for i, u := range us {
		if a := agreement(texts[i], u.Text); a < 0.99 {
			t.Errorf("page %d: word agreement %.3f", i+1, a)
		}
	}
}

// A file the in-process count cannot read falls back to pdfinfo, which
// gives the reason: here a cross-reference table that names object
// 900,000,000 in a file of 200 bytes (a reader that sized its table by
// it would take the process down).
func TestPopplerHostileCrossReference(t *testing.T) {
	t.Parallel()
	if !PopplerAvailable() {
		t.Skip("pdftotext/pdfinfo not installed")
	}
	body := "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 1 >> endobj\n"
	body += fmt.Sprintf("xref\n900000000 1\n0000000009 00000 n \ntrailer << /Size 3 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(body))
	path := filepath.Join(t.TempDir(), "xref.pdf")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := claimedPages(context.Background(), path); ok {
		t.Fatal("an unreadable page tree was counted in process")
	}
	_, err := NewPoppler().Extract(context.Background(), path, extract.Limits{})
	var invalid *steperr.InvalidDocumentError
	if !errors.As(err, &invalid) || !strings.Contains(invalid.Reason, "pdftotext") {
		t.Fatalf("error = %v, want an InvalidDocumentError that names what failed", err)
	}
}
