package pdftext

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// benchPDF generates a PDF of n pages. With b.Loop the benchmark body runs
// once, so this happens once per sub-benchmark and outside the timing.
func benchPDF(b *testing.B, n int) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), fmt.Sprintf("%d.pdf", n))
	if err := pdfgen.WriteFile(p, pdfgen.Options{Pages: n, Seed: 42}); err != nil {
		b.Fatal(err)
	}
	return p
}

func benchExtract(b *testing.B, x extract.PDFExtractor) {
	for _, n := range []int{1000, 3000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			path := benchPDF(b, n)
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				us, err := x.Extract(context.Background(), path, extract.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				if len(us) != n {
					b.Fatalf("got %d units, want %d", len(us), n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(n), "B/page")
		})
	}
}

func BenchmarkPureGo(b *testing.B) { benchExtract(b, NewPureGo()) }

func BenchmarkPoppler(b *testing.B) {
	if !PopplerAvailable() {
		b.Skip("pdftotext/pdfinfo not installed")
	}
	benchExtract(b, NewPoppler())
}

func BenchmarkPopplerOneProcess(b *testing.B) {
	if !PopplerAvailable() {
		b.Skip("pdftotext/pdfinfo not installed")
	}
	benchExtract(b, &Poppler{Parallel: 1})
}
