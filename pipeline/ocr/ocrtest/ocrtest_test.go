package ocrtest

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

func TestPDFCrossReferences(t *testing.T) {
	t.Parallel()
	pdf := Page{Lines: []string{"a (paren) \\ back", "Zoë"}}.PDF()
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(pdf)
	if m == nil {
		t.Fatalf("no startxref trailer:\n%s", pdf)
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(pdf[xref:], []byte("xref\n0 6\n")) {
		t.Fatalf("startxref %d does not point at the xref table", xref)
	}
	offsets := regexp.MustCompile(`(\d{10}) 00000 n `).FindAllSubmatch(pdf, -1)
	if len(offsets) != 5 {
		t.Fatalf("%d xref entries, want 5", len(offsets))
	}
	for i, o := range offsets {
		off, _ := strconv.Atoi(string(o[1]))
		if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(pdf[off:], []byte(want)) {
			t.Errorf("object %d offset %d points at %q", i+1, off, pdf[off:off+10])
		}
	}
	if !bytes.Contains(pdf, []byte(`(a \(paren\) \\ back) Tj`)) || !bytes.Contains(pdf, []byte("(Zo?) Tj")) {
		t.Fatalf("text not escaped:\n%s", pdf)
	}
}
