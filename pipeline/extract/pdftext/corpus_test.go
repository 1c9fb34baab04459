package pdftext

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// corpusDir is the folder samples/corpus/build.sh filled (make corpus);
// without it the corpus tests have nothing to read.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("DOCPIPE_CORPUS")
	if dir == "" {
		tb.Skip("DOCPIPE_CORPUS is not set: run make corpus to build the corpus of real producers' PDFs")
	}
	return dir
}

// searchWords splits text into words the way a search index sees them:
// NFKC (which also takes ligatures apart) and case folding.
func searchWords(s string) []string {
	return strings.Fields(cases.Fold().String(norm.NFKC.String(s)))
}

// TestCorpusAgreesWithPoppler compares the pure-Go extractor with
// pdftotext on every PDF of the corpus, page by page in one count.
func TestCorpusAgreesWithPoppler(t *testing.T) {
	dir := corpusDir(t)
	if !PopplerAvailable() {
		t.Fatal("the corpus comparison needs pdftotext and pdfinfo (poppler-utils)")
	}
	skips, _ := filepath.Glob(filepath.Join(dir, "*.skip"))
	for _, s := range skips {
		reason, _ := os.ReadFile(s)
		t.Run(strings.TrimSuffix(filepath.Base(s), ".skip"), func(t *testing.T) {
			t.Skip(strings.TrimSpace(string(reason)))
		})
	}
	pdfs, _ := filepath.Glob(filepath.Join(dir, "*.pdf"))
	if len(pdfs) == 0 {
		t.Fatalf("no PDFs in %s", dir)
	}
	for _, path := range pdfs {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".pdf"), func(t *testing.T) {
			ctx := context.Background()
			ref, err := NewPoppler().Extract(ctx, path, extract.Limits{})
			if err != nil {
				t.Fatalf("pdftotext: %v", err)
			}
			start := time.Now()
			got, err := NewPureGo().Extract(ctx, path, extract.Limits{})
			if err != nil {
				t.Fatalf("pure Go: %v", err)
			}
			took := time.Since(start)
			if len(got) != len(ref) {
				t.Fatalf("pure Go returned %d pages, pdftotext %d", len(got), len(ref))
			}
			want, have := searchWords(joinUnits(ref)), searchWords(joinUnits(got))
			a := agreement(strings.Join(want, " "), strings.Join(have, " "))
			t.Logf("%d pages, %d words, agreement %.2f%%, pure Go %.0f pages/s",
				len(got), len(want), 100*a, float64(len(got))/took.Seconds())
			if a < 0.99 {
				t.Errorf("word agreement %.4f < 0.99; words only one side has:\n%s", a, wordDiff(want, have))
			}
		})
	}
}

// wordDiff lists (some of) the words one side has more often than the other.
func wordDiff(want, have []string) string {
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	for _, w := range have {
		count[w]--
	}
	var missing, extra []string
	for w, n := range count {
		switch {
		case n > 0:
			missing = append(missing, w)
		case n < 0:
			extra = append(extra, w)
		}
	}
	trim := func(ws []string) []string { return ws[:min(len(ws), 40)] }
	return "pdftotext only: " + strings.Join(trim(missing), " ") + "\npure Go only: " + strings.Join(trim(extra), " ")
}

// BenchmarkPureGoCorpus measures the pure-Go extractor on ~3,000-page
// documents of real producers: enscript (plain text through Ghostscript)
// from the corpus, and groff (two-column ms, its own PDF device), taken
// from the corpus or made here and cached (see groffPDF).
func BenchmarkPureGoCorpus(b *testing.B) {
	b.Run("enscript-3000p", func(b *testing.B) {
		path := filepath.Join(corpusDir(b), "enscript-3000p.pdf")
		if _, err := os.Stat(path); err != nil {
			b.Skipf("corpus has no enscript-3000p.pdf: %v", err)
		}
		benchPureGoFile(b, path)
	})
	b.Run("groff-3000p", func(b *testing.B) { benchPureGoFile(b, groffPDF(b)) })
}

func benchPureGoFile(b *testing.B, path string) {
	x := NewPureGo()
	pages := 0
	for b.Loop() {
		us, err := x.Extract(context.Background(), path, extract.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		pages += len(us)
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}
