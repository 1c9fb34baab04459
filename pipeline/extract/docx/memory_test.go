package docx

import (
	"archive/zip"
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/internal/racebuild"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
)

// Layouts of writeLarge.
const (
	withBreaks    = "pages"    // a page break every 40 paragraphs: pages
	withoutBreaks = "sections" // no page break at all: sections
)

// writeLarge writes a DOCX whose word/document.xml is about size bytes:
// numbered paragraphs with a bold run, a heading every 30, and in the
// pages layout a page break every 40 (pages of about 4,000 characters,
// well inside the slack).
func writeLarge(path string, size int, layout string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	z := zip.NewWriter(f)
	w, err := z.Create("word/document.xml")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &extracttest.CountingWriter{W: bw}
	const tail = `</w:body></w:document>`
	_, _ = io.WriteString(cw, `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="`+nsW+`"><w:body>`)
	for i := 0; cw.N < size-len(tail); i++ {
		if layout == withBreaks && i > 0 && i%40 == 0 {
			_, _ = io.WriteString(cw, pageBreak)
		}
		if i%30 == 0 {
			fmt.Fprintf(cw, `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Part %d</w:t></w:r></w:p>`, i)
		}
		fmt.Fprintf(cw, `<w:p><w:r><w:t xml:space="preserve">`+extracttest.Sentence+`</w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>bold</w:t></w:r></w:p>`, i)
	}
	_, _ = io.WriteString(cw, tail)
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return f.Close()
}

// Streaming a DOCX whose document.xml is 64 MB (about 33 MB of text) holds
// a bounded part of it, with page breaks (the text is held until the end
// of the parse: 4 MiB in memory, the rest in the spill file, then read
// back a page at a time) and without (sections stream from the first page
// over the slack on). The bound is 24 MB: the 4 MiB buffer and the
// garbage of growing it by append, the XML decoder's and the inflater's
// buffers, a page or section, and the garbage the parse makes between two
// collections, which GOGC lets grow as large as the live heap. The slice
// the oracle builds for the same document costs several times the text.
func TestStreamMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 128 MB of XML")
	}
	if racebuild.Enabled {
		t.Skip("takes minutes under the race detector")
	}
	// Not parallel: nothing else may allocate while the heap is measured.
	const size = 64 << 20
	const limit = 24 << 20
	for _, layout := range []string{withBreaks, withoutBreaks} {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "big.docx")
			if err := writeLarge(path, size, layout); err != nil {
				t.Fatal(err)
			}
			spillDir := filepath.Join(dir, "spill")
			if err := os.Mkdir(spillDir, 0o755); err != nil {
				t.Fatal(err)
			}
			st, err := extracttest.MeasureStream(func(emit func(extract.Unit) error) (int, error) {
				return stream(context.Background(), path, extract.Limits{}, spillConfig{dir: spillDir, threshold: spillThreshold}, emit)
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{withBreaks: "page", withoutBreaks: "section"}[layout]; st.Kind != want {
				t.Fatalf("units are %ss, want %ss", st.Kind, want)
			}
			if entries, err := os.ReadDir(spillDir); err != nil || len(entries) > 0 {
				t.Fatalf("spill directory after Stream: %v, %v", entries, err)
			}
			st.CheckBounded(t, size, 1000, size/2, limit)
		})
	}
}

// BenchmarkStream extracts DOCX files whose document.xml is 1, 10 and 100
// MB (extracttest.ScalingSizes), with and without page breaks, and reports
// s/MB of XML and the peak heap; impl=oracle is the slice-based extractor
// that Extract was before Stream.
func BenchmarkStream(b *testing.B) {
	for _, layout := range []string{withBreaks, withoutBreaks} {
		for _, mb := range extracttest.ScalingSizes() {
			path := filepath.Join(b.TempDir(), "in.docx")
			if err := writeLarge(path, mb<<20, layout); err != nil {
				b.Fatal(err)
			}
			for _, impl := range []string{"stream", "oracle"} {
				b.Run(fmt.Sprintf("%s/MB=%d/impl=%s", layout, mb, impl), func(b *testing.B) {
					extracttest.BenchPerMB(b, mb, func() (int, error) {
						if impl == "stream" {
							return Stream(context.Background(), path, extract.Limits{}, func(extract.Unit) error { return nil })
						}
						us, err := oracleExtract(context.Background(), path, extract.Limits{})
						return len(us), err
					})
				})
			}
		}
	}
}
