package extract_test

import (
	"archive/zip"
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/docx"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
	"github.com/docpipe/docpipe/pipeline/extract/htmltext"
	"github.com/docpipe/docpipe/pipeline/extract/mdtext"
	"github.com/docpipe/docpipe/pipeline/extract/pdftext"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// BenchmarkScaling extracts every flowing-text format at 1, 10 and 100 MB
// and PDFs of 300, 3,000 and 30,000 pages, and reports seconds per MB, the
// peak heap and the bytes and allocations per MB. Extraction must cost the
// same per MB at every size, so a ratio of the largest size's s/MB to the
// smallest's above 1.5 is a quadratic somewhere (a whole-text scan per
// section, a string rebuilt per line). DOCPIPE_SCALING_MAX_MB caps the
// sizes (e.g. 10 on a slow machine).
func BenchmarkScaling(b *testing.B) {
	sizes := extracttest.ScalingSizes()
	for _, f := range flowingFormats {
		for _, mb := range sizes {
			b.Run(fmt.Sprintf("%s/MB=%d", f.name, mb), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), f.name+f.ext)
				if err := f.write(path, mb<<20); err != nil {
					b.Fatal(err)
				}
				benchFile(b, path, float64(mb), f.extract)
			})
		}
	}
	for _, mb := range sizes {
		pages := 300 * mb
		b.Run(fmt.Sprintf("pdf-go/pages=%d", pages), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "gen.pdf")
			if err := pdfgen.WriteFile(path, pdfgen.Options{Pages: pages, Seed: 7}); err != nil {
				b.Fatal(err)
			}
			x := pdftext.NewPureGo()
			benchFile(b, path, fileMB(b, path), streamed(x.StreamPages))
		})
		if pdftext.PopplerAvailable() {
			b.Run(fmt.Sprintf("pdf-poppler/pages=%d", pages), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "gen.pdf")
				if err := pdfgen.WriteFile(path, pdfgen.Options{Pages: pages, Seed: 7}); err != nil {
					b.Fatal(err)
				}
				x := pdftext.NewPoppler()
				benchFile(b, path, fileMB(b, path), streamed(x.StreamPages))
			})
		}
	}
}

type extractFunc func(context.Context, string, extract.Limits) ([]extract.Unit, error)

type flowingFormat struct {
	name, ext string
	write     func(path string, size int) error
	extract   extractFunc
}

var flowingFormats = []flowingFormat{
	{"text", ".txt", writeParagraphs, streamed(plaintext.Stream)},
	{"text-one-line", ".txt", writeOneLine, streamed(plaintext.Stream)},
	{"html-flat", ".html", writeFlatHTML, streamed(htmltext.Stream)},
	{"html-deep", ".html", writeDeepHTML, streamed(htmltext.Stream)},
	{"markdown", ".md", writeMarkdown, streamed(mdtext.Stream)},
	{"docx", ".docx", writeDOCX, streamed(docx.Stream)},
}

// streamed reads a streaming format as format_parser does: every unit is
// handed over and let go, so the heap holds what the pipeline holds.
func streamed(stream extract.UnitStreamer) extractFunc {
	return func(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
		n, err := stream(ctx, path, limits, func(extract.Unit) error { return nil })
		return make([]extract.Unit, n), err
	}
}

func fileMB(b *testing.B, path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return float64(fi.Size()) / (1 << 20)
}

// benchFile extracts path once per iteration and reports s/MB (of the
// uncompressed content for DOCX), units and how far the heap rose while it
// ran.
func benchFile(b *testing.B, path string, mb float64, x extractFunc) {
	var units int
	var peak, allocBytes, allocs uint64
	var elapsed time.Duration
	var before, after runtime.MemStats
	for b.Loop() {
		probe := extracttest.StartHeapProbe()
		runtime.ReadMemStats(&before)
		start := time.Now()
		us, err := x(context.Background(), path, extract.Limits{})
		elapsed += time.Since(start)
		peak = max(peak, probe.Stop())
		runtime.ReadMemStats(&after)
		allocBytes += after.TotalAlloc - before.TotalAlloc
		allocs += after.Mallocs - before.Mallocs
		if err != nil {
			b.Fatal(err)
		}
		units = len(us)
	}
	b.ReportMetric(elapsed.Seconds()/float64(b.N)/mb, "s/MB")
	b.ReportMetric(mb, "file-MB")
	b.ReportMetric(float64(units), "units")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	// Allocation per MB is the load-independent twin of s/MB: timings
	// swing on a busy machine, these do not.
	b.ReportMetric(float64(allocBytes)/(1<<20)/float64(b.N)/mb, "alloc-MB/MB")
	b.ReportMetric(float64(allocs)/float64(b.N)/mb, "allocs/MB")
}

func writeParagraphs(path string, size int) error {
	return extracttest.WriteRepeated(path, size, "", "", func(w io.Writer, i int) {
		fmt.Fprintf(w, extracttest.Sentence, i)
		if i%8 == 7 {
			io.WriteString(w, "\n\n")
		} else if i%2 == 1 {
			io.WriteString(w, "\n")
		}
	})
}

// writeOneLine is the whole file as a single line: no line break at all.
func writeOneLine(path string, size int) error {
	return extracttest.WriteRepeated(path, size, "", "", func(w io.Writer, i int) { fmt.Fprintf(w, extracttest.Sentence, i) })
}

func writeFlatHTML(path string, size int) error {
	return extracttest.WriteRepeated(path, size, "<!doctype html><html><head><title>t</title></head><body>\n", "</body></html>\n",
		func(w io.Writer, i int) {
			if i%20 == 0 {
				fmt.Fprintf(w, "<h2>Part %d</h2>\n", i)
			}
			fmt.Fprintf(w, "<p>"+extracttest.Sentence+"<b>bold</b> and <a href=\"#x\">a link</a>.</p>\n", i)
		})
}

// writeDeepHTML nests every paragraph one <div> deeper than the last, far
// past the tree parser's limit of 512 open elements; the closing tags are
// all at the end.
func writeDeepHTML(path string, size int) error {
	const open = "<div><p>" + extracttest.Sentence + "</p>\n"
	per := len(open) + len("</div>") + 8
	n := size / per
	var tail strings.Builder
	for range n {
		tail.WriteString("</div>")
	}
	tail.WriteString("</body></html>\n")
	count := 0
	return extracttest.WriteRepeated(path, size, "<!doctype html><html><body>\n", tail.String(), func(w io.Writer, i int) {
		if count < n {
			fmt.Fprintf(w, open, i)
			count++
		} else {
			io.WriteString(w, " ")
		}
	})
}

func writeMarkdown(path string, size int) error {
	return extracttest.WriteRepeated(path, size, "# Report\n\n", "", func(w io.Writer, i int) {
		switch {
		case i%40 == 0:
			fmt.Fprintf(w, "\n## Part %d\n\n", i)
		case i%10 == 0:
			fmt.Fprintf(w, "- item %d with *emphasis* and `code`\n\n", i)
		}
		fmt.Fprintf(w, extracttest.Sentence, i)
		if i%4 == 3 {
			io.WriteString(w, "\n\n")
		}
	})
}

// writeDOCX writes a minimal DOCX whose document.xml is about size bytes.
func writeDOCX(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	z := zip.NewWriter(f)
	parts := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"_rels/.rels":         `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
	}
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels"} {
		w, err := z.Create(name)
		if err != nil {
			return err
		}
		io.WriteString(w, parts[name])
	}
	w, err := z.Create("word/document.xml")
	if err != nil {
		return err
	}
	cw := &extracttest.CountingWriter{W: bufio.NewWriterSize(w, 1<<20)}
	io.WriteString(cw, `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	for i := 0; cw.N < size; i++ {
		if i%30 == 0 {
			fmt.Fprintf(cw, `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Part %d</w:t></w:r></w:p>`, i)
		}
		fmt.Fprintf(cw, `<w:p><w:r><w:t xml:space="preserve">`+extracttest.Sentence+`</w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>bold</w:t></w:r></w:p>`, i)
	}
	io.WriteString(cw, `</w:body></w:document>`)
	if err := cw.W.(*bufio.Writer).Flush(); err != nil {
		return err
	}
	return z.Close()
}
