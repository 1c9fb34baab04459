package mdtext

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

// writeMarkdown writes about size bytes of Markdown: headings, paragraphs,
// lists, code fences with blank lines, tables, and reference links to a
// hundred labels, each defined again and again (the first definition
// wins), so that the gathering pass runs and the definitions stay few.
func writeMarkdown(path string, size int, refs bool) error {
	return extracttest.WriteRepeated(path, size, "# Report\n\n", "", func(w io.Writer, i int) {
		switch {
		case i%40 == 0:
			fmt.Fprintf(w, "## Part %d\n\n", i)
		case i%40 == 10:
			fmt.Fprintf(w, "- item %d with *emphasis* and `code`\n- another\n  - nested\n\n", i)
		case i%40 == 20:
			fmt.Fprintf(w, "```\nfunc f%d() {}\n\n// a blank line above\n```\n\n", i)
		case i%40 == 30:
			fmt.Fprintf(w, "| Office | Staff |\n|---|---|\n| %d | **%d** |\n\n", i, i%97)
		}
		fmt.Fprintf(w, extracttest.Sentence, i)
		if refs && i%8 == 5 {
			fmt.Fprintf(w, "See [the office][ref%d]. ", i%100)
		}
		if i%4 == 3 {
			io.WriteString(w, "\n\n")
		}
		if refs && i%16 == 15 {
			fmt.Fprintf(w, "[ref%d]: mailto:office%d@x.example \"Office %d\"\n\n", i%100, i, i)
		}
	})
}

// Streaming 64 MB of Markdown (24 MB with -short) holds a bounded part
// of it: the peak heap stays under 16 MB plus a few sections, with
// reference links (two parses) and without. (The whole-file path needs
// the file's size many times over: goldmark's tree of a file with a
// definition in it, which it parsed whole.)
func TestStreamMemoryIsBounded(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("takes a minute under the race detector; make test-long measures it at full size on a plain build")
	}
	// Not parallel: nothing else may allocate while the heap is measured.
	size := extracttest.StreamMemorySize()
	limit := uint64(16<<20 + 4*extract.DefaultLimits.MaxSectionChars)
	for _, refs := range []bool{false, true} {
		t.Run(fmt.Sprintf("refs=%v", refs), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "big.md")
			if err := writeMarkdown(path, size, refs); err != nil {
				t.Fatal(err)
			}
			st, err := extracttest.MeasureStream(func(emit func(extract.Unit) error) (int, error) {
				return Stream(context.Background(), path, extract.Limits{}, emit)
			})
			if err != nil {
				t.Fatal(err)
			}
			st.CheckBounded(t, size, size/extract.DefaultLimits.MaxSectionChars, size*8/10, limit)
		})
	}
}

// BenchmarkStream streams Markdown files of 1, 10 and 100 MB (see
// extracttest.ScalingSizes), with and without reference links, and
// reports s/MB, the peak heap and the peak heap per MB of file;
// impl=whole is the whole-file extraction that Extract was before.
func BenchmarkStream(b *testing.B) {
	for _, refs := range []bool{false, true} {
		for _, mb := range extracttest.ScalingSizes() {
			path := filepath.Join(b.TempDir(), "in.md")
			if err := writeMarkdown(path, mb<<20, refs); err != nil {
				b.Fatal(err)
			}
			for _, impl := range []string{"stream", "whole"} {
				b.Run(fmt.Sprintf("refs=%v/MB=%d/impl=%s", refs, mb, impl), func(b *testing.B) {
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
