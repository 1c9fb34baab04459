package main

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/ocr"
)

func TestRunPageImages(t *testing.T) {
	t.Parallel()
	if ok, reason := (&ocr.Renderer{}).Available(); !ok {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install poppler-utils: %s", reason)
		}
		t.Skip(reason)
	}
	home := t.TempDir()
	pdf := filepath.Join(docs, "shipment-log.pdf")
	out, err := cli(t, "run", "--home", home, "--json", "--progress", "none", "--page-images", "png", pdf)
	if err != nil {
		t.Fatal(err)
	}
	res := decodeLines[docResult](t, out)
	if len(res) != 1 || res[0].Status != "completed" || res[0].Segments == 0 {
		t.Fatalf("%+v", res)
	}
	out, err = cli(t, "show", "--home", home, "--images", res[0].WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != res[0].Segments {
		t.Fatalf("%d image lines for %d segments:\n%s", len(lines), res[0].Segments, out)
	}
	for _, line := range lines {
		_, uri, _ := strings.Cut(line, "\t")
		u, err := url.Parse(uri)
		if err != nil || u.Scheme != "file" || !strings.HasSuffix(u.Path, "/page.png") {
			t.Fatalf("image %q", uri)
		}
		b, err := os.ReadFile(u.Path)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("%s: not a PNG (%v)", u.Path, err)
		}
	}

	// Without the option there are no images, and show says why.
	other := t.TempDir()
	out, _ = cli(t, "run", "--home", other, "--json", "--progress", "none", pdf)
	id := decodeLines[docResult](t, out)[0].WorkflowID
	out, _ = cli(t, "show", "--home", other, "--images", id)
	if !strings.Contains(out, "no image") {
		t.Errorf("show --images without page images:\n%s", out)
	}
	if _, err := cli(t, "run", "--home", other, "--page-images", "gif", pdf); err == nil {
		t.Error("--page-images gif was accepted")
	}
}
