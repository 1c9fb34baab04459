package pdftext

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// rawPDF writes objects 1..n (object 1 is the catalog) with a correct xref
// table, for malformed structures the generator does not make.
func rawPDF(t *testing.T, objects ...string) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	p := filepath.Join(t.TempDir(), "raw.pdf")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func stream(s string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(s), s)
}

const helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"

func TestPureGoDeepPageTree(t *testing.T) {
	t.Parallel()
	// 1 catalog, 2..101 nested /Pages nodes, 102 the only page.
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>"}
	for i := 2; i <= 101; i++ {
		objs = append(objs, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", i+1))
	}
	objs = append(objs, "<< /Type /Page /MediaBox [0 0 612 792] >>")
	_, err := NewPureGo().Extract(context.Background(), rawPDF(t, objs...), extract.Limits{})
	wantErr[*steperr.InvalidDocumentError](t, err)
}

func TestPureGoBadPageDoesNotSinkDocument(t *testing.T) {
	t.Parallel()
	path := rawPDF(t,
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /Resources << /Font << /F1 5 0 R >> >> >>",
		"<< /Type /Page /Parent 2 0 R /Contents 6 0 R >>",
		"<< /Type /Page /Parent 2 0 R /Contents 7 0 R >>",
		helvetica,
		stream("BT /F1 12 Tf 72 700 Td (Readable page) Tj ET"),
		// An unknown filter makes the library panic.
		"<< /Length 4 /Filter /NoSuchDecode >>\nstream\nxxxx\nendstream",
	)
	us, err := NewPureGo().Extract(context.Background(), path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 2 || us[0].Text != "Readable page" || us[1].Text != "" || !us[1].NeedsOCR {
		t.Fatalf("units = %+v", us)
	}
}

func TestPureGoAllPagesBad(t *testing.T) {
	t.Parallel()
	path := rawPDF(t,
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
		"<< /Length 4 /Filter /NoSuchDecode >>\nstream\nxxxx\nendstream",
	)
	_, err := NewPureGo().Extract(context.Background(), path, extract.Limits{})
	wantErr[*steperr.InvalidDocumentError](t, err)
}

// Text inside a form XObject, drawn with a word-spacing operator the
// library ignores and without /Widths (estimated advances).
func TestPureGoFormXObject(t *testing.T) {
	t.Parallel()
	path := rawPDF(t,
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /XObject << /X1 5 0 R >> /Font << /F1 6 0 R >> >> >>",
		stream("BT /F1 12 Tf 72 720 Td (Title line) Tj ET q 1 0 0 1 0 -100 cm /X1 Do Q"),
		"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Length 47 >>\nstream\nBT /F1 10 Tf 72 700 Td [(inside)-3000(form)] TJ ET\nendstream",
		helvetica,
	)
	us, err := NewPureGo().Extract(context.Background(), path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 1 || us[0].Text != "Title line\ninside form" {
		t.Fatalf("units = %+v", us)
	}
}

func TestAssemble(t *testing.T) {
	t.Parallel()
	// word places the glyphs of s at x with 5pt advances, size 10.
	word := func(s string, x, y float64) []glyph {
		var gs []glyph
		for i, r := range s {
			gs = append(gs, glyph{x: x + 5*float64(i), y: y, w: 5, size: 10, s: string(r)})
		}
		return gs
	}
	cat := func(parts ...[]glyph) []glyph {
		var out []glyph
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name string
		in   []glyph
		want string
	}{
		{"gap splits words", cat(word("marker", 0, 700), word("Ship", 32.5, 700)), "marker Ship"},
		{"kerning keeps words", cat(word("Wo", 0, 700), word("rd", 9.2, 700)), "Word"},
		{"drawn space", cat(word("a", 0, 700), []glyph{{x: 5, y: 700, w: 0, size: 10, s: " "}}, word("b", 5, 700)), "a b"},
		{"lines top to bottom, x order", cat(word("second", 0, 680), word("right", 100, 700), word("left", 0, 700)), "left right\nsecond"},
		{"superscript stays on line", cat(word("x", 0, 700), word("2", 5, 703)), "x2"},
		{"fake bold drawn twice", cat(word("B", 0, 700), word("B", 0.3, 700), word("old", 5, 700)), "Bold"},
		{"no widths", []glyph{{x: 0, y: 700, size: 10, s: "a"}, {x: 20, y: 700, size: 10, s: "b"}}, "a b"},
		{"ligature glyphs spelled out", cat(word("work", 0, 700), []glyph{{x: 20, y: 700, w: 5, size: 10, s: unligature("\ufb02")}}, word("ow", 25, 700)), "workflow"},
		{"hyphenated line end joined", cat(word("confi-", 0, 700), word("dential", 0, 688)), "confidential"},
		{"hyphen before a capital kept", cat(word("Jean-", 0, 700), word("Paul", 0, 688)), "Jean-\nPaul"},
		{"dash after a digit kept", cat(word("1990-", 0, 700), word("ties", 0, 688)), "1990-\nties"},
		{"two columns read one after the other", cat(
			word("left-", 0, 700), word("right1", 100, 700),
			word("ward", 0, 688), word("right2", 100, 688),
			word("left3", 0, 676), word("right3", 100, 676)), "leftward\nleft3\nright1\nright2\nright3"},
		{"title above columns", cat(
			word("title", 40, 730),
			word("aa", 0, 700), word("bb", 100, 700),
			word("cc", 0, 688), word("dd", 100, 688)), "title\naa\ncc\nbb\ndd"},
		{"upright frame of rotated text", []glyph{
			{x: 700, y: 0, w: 5, size: 10, s: "u", dir: 1}, {x: 705, y: 0, w: 5, size: 10, s: "p", dir: 1}}, "up"},
		{"garbage dropped", []glyph{{x: 0, y: 700, size: 10, w: 5, s: "\n"}, {x: 0, y: 700, size: 0, w: 5, s: "z"}}, "z"},
	}
	for _, c := range cases {
		if got := assemble(c.in); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	if got := assemble(nil); got != "" {
		t.Errorf("empty: %q", got)
	}
	if strings.Contains(assemble(word("abc", 0, 0)), " ") {
		t.Error("contiguous glyphs split")
	}
}
