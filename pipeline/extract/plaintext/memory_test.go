package plaintext

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/internal/racebuild"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
)

// latin1Sentence is in Windows-1252: the file must be decoded.
const latin1Sentence = "Le d\xe9l\xe9gu\xe9 du bureau num\xe9ro %d a re\xe7u le dossier \x93complet\x94 \xe0 temps. "

// Layouts of writeText.
const (
	layoutParagraphs = "paragraphs"   // eight sentences on four lines a paragraph
	layoutOneLine    = "one-line"     // no line break at all
	layoutLatin1     = "windows-1252" // paragraphs, not UTF-8
)

// writeText writes about size bytes of sentences in a layout.
func writeText(path string, size int, layout string) error {
	format := extracttest.Sentence
	if layout == layoutLatin1 {
		format = latin1Sentence
	}
	return extracttest.WriteRepeated(path, size, "", "", func(w io.Writer, i int) {
		fmt.Fprintf(w, format, i)
		switch {
		case layout == layoutOneLine:
		case i%8 == 7:
			io.WriteString(w, "\n\n")
		case i%2 == 1:
			io.WriteString(w, "\n")
		}
	})
}

// Streaming a 64 MB file (24 MB with -short) holds a bounded part of it:
// the peak heap stays under 16 MB plus a section, for paragraphs and for
// a file without a single line break. (Reading the whole file, as
// Extract did, needs the file's size several times over.)
func TestStreamMemoryIsBounded(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("takes a minute under the race detector; make test-long measures it at full size on a plain build")
	}
	// Not parallel: nothing else may allocate while the heap is measured.
	size := extracttest.StreamMemorySize()
	limit := uint64(16<<20 + 4*extract.DefaultLimits.MaxSectionChars)
	for _, layout := range []string{layoutParagraphs, layoutOneLine} {
		t.Run(layout, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "big.txt")
			if err := writeText(path, size, layout); err != nil {
				t.Fatal(err)
			}
			st, err := extracttest.MeasureStream(func(emit func(extract.Unit) error) (int, error) {
				return Stream(context.Background(), path, extract.Limits{}, emit)
			})
			if err != nil {
				t.Fatal(err)
			}
			st.CheckBounded(t, size, size/extract.DefaultLimits.MaxSectionChars, size*9/10, limit)
		})
	}
}

// BenchmarkStream streams text files of 1, 10 and 100 MB, in paragraphs,
// as one line and in Windows-1252, and reports s/MB, the peak heap and the
// peak heap per MB of file; impl=whole is the whole-file extraction that
// Extract was before.
func BenchmarkStream(b *testing.B) {
	for _, layout := range []string{layoutParagraphs, layoutOneLine, layoutLatin1} {
		for _, mb := range extracttest.ScalingSizes() {
			path := filepath.Join(b.TempDir(), "in.txt")
			if err := writeText(path, mb<<20, layout); err != nil {
				b.Fatal(err)
			}
			for _, impl := range []string{"stream", "whole"} {
				b.Run(fmt.Sprintf("%s/MB=%d/impl=%s", layout, mb, impl), func(b *testing.B) {
					extracttest.BenchPerMB(b, mb, func() (int, error) {
						if impl == "stream" {
							return Stream(context.Background(), path, extract.Limits{}, func(extract.Unit) error { return nil })
						}
						us, err := wholeExtract(context.Background(), path, extract.Limits{})
						return len(us), err
					})
				})
			}
		}
	}
}
