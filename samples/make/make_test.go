package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline/ocr"
)

// TestSamplesUpToDate regenerates every sample and compares it with the
// committed file: edit the generator, then run `go run ./samples/make`.
func TestSamplesUpToDate(t *testing.T) {
	t.Parallel()
	files, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("only %d samples built", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v (run go run ./samples/make)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("samples/%s differs from what samples/make writes (run go run ./samples/make)", name)
		}
	}
	if n := len(files["bad/zipbomb.docx"]); n >= 200<<10 {
		t.Errorf("zipbomb.docx is %d bytes, want < 200 KB", n)
	}
}

// TestScanRenders writes scan.png afresh; pdftoppm versions may differ in
// bytes, so the check is on the image, not the file.
func TestScanRenders(t *testing.T) {
	t.Parallel()
	if ok, reason := (&ocr.Renderer{}).Available(); !ok {
		if os.Getenv("CI") != "" {
			t.Fatal(reason)
		}
		t.Skip(reason)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := renderScan(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "docs", "scan.png"), "../docs/scan.png"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		_ = f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if cfg.Width != 1275 || cfg.Height != 792 { // 612x380 points at 150 dpi
			t.Fatalf("%s is %dx%d", path, cfg.Width, cfg.Height)
		}
	}
}
