// Package ocrtest makes images of known text for OCR tests and samples:
// a one-page PDF written here, rendered by pdftoppm.
package ocrtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docpipe/docpipe/pipeline/ocr"
)

// Page is a one-page PDF of text lines in Helvetica.
type Page struct {
	Width, Height float64 // points; default US Letter
	FontSize      float64 // default 14
	Lines         []string
}

// PDF returns the page as a complete PDF file (one Helvetica font, one
// content stream, a correct cross-reference table). Characters outside
// printable ASCII are written as '?'.
func (p Page) PDF() []byte {
	w, h, fs := p.Width, p.Height, p.FontSize
	if w <= 0 || h <= 0 {
		w, h = 612, 792
	}
	if fs <= 0 {
		fs = 14
	}
	var content bytes.Buffer
	fmt.Fprintf(&content, "BT\n/F1 %g Tf\n%g TL\n%g %g Td\n", fs, fs*1.5, 54.0, h-54-fs)
	for _, line := range p.Lines {
		fmt.Fprintf(&content, "(%s) Tj T*\n", escape(line))
	}
	content.WriteString("ET\n")

	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>", w, h),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", content.Len(), content.String()),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objects))
	for i, obj := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, obj)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

func escape(s string) string {
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r == '(' || r == ')' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r < 0x20 || r > 0x7E:
			sb.WriteByte('?')
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// RenderPNG writes the page's PDF into dir and renders it with pdftoppm at
// dpi (150 when 0), returning the PNG's path. The error is an
// *ocr.UnavailableError when pdftoppm is not installed.
func (p Page) RenderPNG(ctx context.Context, dir string, dpi int) (string, error) {
	pdf := filepath.Join(dir, "ocrtest.pdf")
	if err := os.WriteFile(pdf, p.PDF(), 0o644); err != nil {
		return "", err
	}
	r := &ocr.Renderer{DPI: dpi}
	return r.Render(ctx, pdf, 1, dir)
}
