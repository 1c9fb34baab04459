package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// BenchmarkRunPDF runs `docpipe run` as a child process on generated 1,000-
// and 3,000-page PDFs, all steps included (extraction, analysis, graph,
// summary, state and blobs), and reports wall time and peak RSS beside bare
// `pdftotext` on the same file when poppler is installed.
func BenchmarkRunPDF(b *testing.B) {
	bin := testbin.Docpipe(b)
	for _, pages := range []int{1000, 3000} {
		pdf := filepath.Join(b.TempDir(), fmt.Sprintf("gen-%d.pdf", pages))
		if err := pdfgen.WriteFile(pdf, pdfgen.Options{Pages: pages, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		for _, backend := range []string{"poppler", "go"} {
			if backend == "poppler" {
				if _, err := exec.LookPath("pdftotext"); err != nil {
					continue
				}
			}
			b.Run(fmt.Sprintf("pages=%d/pdf=%s", pages, backend), func(b *testing.B) {
				secs, rss := timeRuns(b, bin, func() string { return benchHome(b) }, "--pdf", backend, pdf)
				b.ReportMetric(secs, "wall-s")
				b.ReportMetric(float64(pages)/secs, "pages/s")
				b.ReportMetric(rss, "peak-RSS-MB")
				if backend == "poppler" {
					start := time.Now()
					if out, err := exec.Command("pdftotext", pdf, os.DevNull).CombinedOutput(); err != nil {
						b.Fatalf("pdftotext: %v\n%s", err, out)
					}
					bare := time.Since(start).Seconds()
					b.ReportMetric(bare, "pdftotext-s")
					b.ReportMetric(secs/bare, "x-pdftotext")
				}
			})
		}
	}
}
