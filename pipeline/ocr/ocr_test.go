package ocr_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/ocr"
	"github.com/docpipe/docpipe/pipeline/ocr/ocrtest"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// requireTools skips where the OCR tools are not installed, except in CI,
// which installs them and must not silently skip.
func requireTools(t *testing.T) {
	t.Helper()
	for _, e := range []interface{ Available() (bool, string) }{ocr.NewTesseract(), &ocr.Renderer{}} {
		if ok, reason := e.Available(); !ok {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI must install the OCR tools: %s", reason)
			}
			t.Skip(reason)
		}
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		engine ocr.Engine
		reason string
	}{
		{"missing binary", &ocr.Tesseract{Binary: "/nonexistent/bin/tesseract"}, ocr.ReasonNoTesseract},
		{"not on PATH", &ocr.Tesseract{Binary: "tesseract-not-installed-here"}, ocr.ReasonNoTesseract},
		{"disabled", ocr.Unavailable{Reason: "OCR skipped: disabled by configuration"}, "OCR skipped: disabled by configuration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ok, reason := tc.engine.Available()
			if ok || reason != tc.reason {
				t.Fatalf("Available = %v, %q; want false, %q", ok, reason, tc.reason)
			}
			_, err := tc.engine.Recognize(context.Background(), "any.png")
			var ue *ocr.UnavailableError
			if !errors.As(err, &ue) || ue.Reason != tc.reason {
				t.Fatalf("Recognize error = %v, want UnavailableError %q", err, tc.reason)
			}
		})
	}
	r := &ocr.Renderer{Binary: "/nonexistent/pdftoppm"}
	if ok, reason := r.Available(); ok || reason != ocr.ReasonNoPdftoppm {
		t.Fatalf("Renderer.Available = %v, %q", ok, reason)
	}
	var ue *ocr.UnavailableError
	if _, err := r.Render(context.Background(), "x.pdf", 1, t.TempDir()); !errors.As(err, &ue) {
		t.Fatalf("Render error = %v, want UnavailableError", err)
	}
}

func TestMissingLanguage(t *testing.T) {
	t.Parallel()
	requireTools(t)
	ok, reason := (&ocr.Tesseract{Lang: "zzz"}).Available()
	if ok || !strings.Contains(reason, `no "zzz" language data`) {
		t.Fatalf("Available = %v, %q", ok, reason)
	}
}

func TestRecognizeRenderedPage(t *testing.T) {
	t.Parallel()
	requireTools(t)
	ctx := context.Background()
	dir := t.TempDir()
	page := ocrtest.Page{Width: 612, Height: 300, FontSize: 18, Lines: []string{
		"Quarterly invoice for Brightside Dental",
		"Amount due: 794 dollars by 13 November 2024",
	}}
	png, err := page.RenderPNG(ctx, dir, 150)
	if err != nil {
		t.Fatal(err)
	}
	text, err := ocr.NewTesseract().Recognize(ctx, png)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Quarterly invoice", "Brightside Dental", "794 dollars", "13 November 2024"} {
		if !strings.Contains(text, w) {
			t.Errorf("OCR text lacks %q:\n%s", w, text)
		}
	}
}

func TestRecognizeSampleScan(t *testing.T) {
	t.Parallel()
	requireTools(t)
	text, err := ocr.NewTesseract().Recognize(context.Background(), "../../samples/docs/scan.png")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"INVOICE INV-2024-0193", "14 October 2024", "Helena Novak", "$794.00"} {
		if !strings.Contains(text, w) {
			t.Errorf("OCR text lacks %q:\n%s", w, text)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	requireTools(t)
	ctx := context.Background()
	dir := t.TempDir()
	notImage := filepath.Join(dir, "not-an-image.png")
	if err := os.WriteFile(notImage, []byte("hello, not a picture"), 0o644); err != nil {
		t.Fatal(err)
	}
	pdf := filepath.Join(dir, "one.pdf")
	if err := os.WriteFile(pdf, ocrtest.Page{Lines: []string{"x"}}.PDF(), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.pdf")
	if err := os.WriteFile(garbage, []byte("%PDF-1.4\nnothing else"), 0o644); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	tests := []struct {
		name    string
		run     func() error
		errName string
		is      error
	}{
		{"unreadable image", func() error { _, err := ocr.NewTesseract().Recognize(ctx, notImage); return err }, steperr.NameInvalidDocument, nil},
		{"page past the end", func() error { _, err := ocr.RenderPDFPage(ctx, pdf, 5, dir); return err }, steperr.NameInvalidDocument, nil},
		{"page zero", func() error { _, err := ocr.RenderPDFPage(ctx, pdf, 0, dir); return err }, steperr.NameInvalidInput, nil},
		{"broken pdf", func() error { _, err := ocr.RenderPDFPage(ctx, garbage, 1, dir); return err }, steperr.NameInvalidDocument, nil},
		{"canceled", func() error { _, err := ocr.RenderPDFPage(canceled, pdf, 1, dir); return err }, "", context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.run()
			if tc.is != nil {
				if !errors.Is(err, tc.is) {
					t.Fatalf("err = %v, want %v", err, tc.is)
				}
				return
			}
			if steperr.Name(err) != tc.errName {
				t.Fatalf("err = %v, want %s", err, tc.errName)
			}
		})
	}
}

func BenchmarkRecognize(b *testing.B) {
	if ok, reason := ocr.NewTesseract().Available(); !ok {
		b.Skip(reason)
	}
	t := ocr.NewTesseract()
	for b.Loop() {
		if _, err := t.Recognize(context.Background(), "../../samples/docs/scan.png"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderPDFPage(b *testing.B) {
	dir := b.TempDir()
	pdf := filepath.Join(dir, "p.pdf")
	if err := os.WriteFile(pdf, ocrtest.Page{Lines: []string{"Benchmark page"}}.PDF(), 0o644); err != nil {
		b.Fatal(err)
	}
	if ok, reason := (&ocr.Renderer{}).Available(); !ok {
		b.Skip(reason)
	}
	for b.Loop() {
		if _, err := ocr.RenderPDFPage(context.Background(), pdf, 1, dir); err != nil {
			b.Fatal(err)
		}
	}
}
