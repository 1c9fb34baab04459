package pdftext

import (
	"bytes"
	"context"
	"fmt"
	"os"
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
			benchExtractFile(b, x, benchPDF(b, n), n)
		})
	}
}

func benchExtractFile(b *testing.B, x extract.PDFExtractor, path string, n int) {
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
}

// BenchmarkPureGoEncrypted measures what decryption adds: compare with
// BenchmarkPureGo/pages=3000, the same document unencrypted.
func BenchmarkPureGoEncrypted(b *testing.B) {
	const n = 3000
	opts := pdfgen.Options{Pages: n, Seed: 42}
	for _, m := range []pdfgen.Method{pdfgen.RC4_40, pdfgen.RC4_128, pdfgen.AES_128} {
		b.Run(m.String(), func(b *testing.B) {
			o := opts
			o.Encrypt = &pdfgen.Encryption{Method: m}
			path, _ := generate(b, o)
			benchExtractFile(b, NewPureGo(), path, n)
		})
	}
	b.Run("AES-256", func(b *testing.B) {
		path, _ := generateAES256(b, opts, "", 6)
		benchExtractFile(b, NewPureGo(), path, n)
	})
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

// BenchmarkDecrypt measures the in-memory decryption alone, the part of
// BenchmarkPureGoEncrypted/RC4-40 that an unencrypted file does not pay.
func BenchmarkDecrypt(b *testing.B) {
	path, _ := generate(b, pdfgen.Options{Pages: 3000, Seed: 42, Encrypt: &pdfgen.Encryption{Method: pdfgen.RC4_40}})
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decrypt(context.Background(), bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
}
