package analyze

import (
	"os"
	"testing"
)

func loadPage(b *testing.B) string {
	b.Helper()
	p, err := os.ReadFile("testdata/page_en.txt")
	if err != nil {
		b.Fatal(err)
	}
	return string(p)
}

// BenchmarkAnalyzeSegment analyses one ~3,000-character page per
// iteration and reports pages per second.
func BenchmarkAnalyzeSegment(b *testing.B) {
	page := loadPage(b)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		AnalyzeSegment(page, Options{})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}
