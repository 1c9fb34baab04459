package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// backfillBenchPipeline is the built-in pipeline with one more stage at
// the end, a command whose setting v is all a new version changes.
func backfillBenchPipeline(v string) string {
	return `name: bench
stages:
  - name: segment_analyzer
    needs: [segment_builder]
    run: {builtin: segment_analyzer}
  - name: graph_builder
    needs: [segment_analyzer]
    run: {builtin: graph_builder}
  - name: document_summarizer
    needs: [graph_builder]
    run: {builtin: document_summarizer}
  - name: tag
    needs: [document_summarizer]
    run: {command: [sh, -c, "cat >/dev/null; echo '{}'"]}
    settings: {v: ` + v + `}
`
}

// backfillBenchCommand is the changed stage's command: what a backfill
// must run again for every document whatever the cache holds.
var backfillBenchCommand = []string{"sh", "-c", "cat >/dev/null; echo '{}'"}

// BenchmarkBackfillLastStage processes 1,000 one-page documents and one
// 3,000-page PDF from scratch, then backfills them onto a version that
// changes only the last stage, and reports both wall times and the
// backfill's share of the first; the two sets also on their own, the PDF
// once as pdfgen writes it and once as groff does (a real producer's
// fonts and streams; skipped without groff's file in the user cache
// directory). The stage cache spares the extraction, the analysis, the
// graph and the summary; segment_prep, segment_builder, the changed stage
// and every workflow's own bookkeeping run again.
// changed-stage reports what the changed stage costs on its own: one
// spawn of its command per document, the floor under any backfill.
func BenchmarkBackfillLastStage(b *testing.B) {
	small, pdf := b.TempDir(), b.TempDir()
	if err := writeSmallDocuments(small, smallDocuments); err != nil {
		b.Fatal(err)
	}
	if err := pdfgen.WriteFile(filepath.Join(pdf, "big.pdf"), pdfgen.Options{Pages: 3000, Seed: 3}); err != nil {
		b.Fatal(err)
	}
	b.Run("both", func(b *testing.B) { benchBackfill(b, small, pdf) })
	b.Run("small", func(b *testing.B) { benchBackfill(b, small) })
	b.Run("pdf=pdfgen", func(b *testing.B) { benchBackfill(b, pdf) })
	b.Run("pdf=groff", func(b *testing.B) {
		groff := groffBigPDF(b)
		b.Logf("3,000-page PDF made by groff: %s", groff)
		dir := b.TempDir()
		if err := os.Symlink(groff, filepath.Join(dir, "big.pdf")); err != nil {
			b.Fatal(err)
		}
		benchBackfill(b, dir)
	})
	b.Run("changed-stage/small", func(b *testing.B) { benchSpawns(b, smallDocuments) })
	b.Run("changed-stage/pdf", func(b *testing.B) { benchSpawns(b, 1) })
}

// groffBigPDF is the 3,000-page PDF groff made, kept in the user cache
// directory (making it takes minutes); without it the benchmark skips.
func groffBigPDF(b *testing.B) string {
	cache, err := os.UserCacheDir()
	if err != nil {
		b.Skip("no user cache directory")
	}
	path := filepath.Join(cache, "docpipe-bench", "groff-3000p.pdf")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("no groff PDF at %s", path)
	}
	return path
}

// benchSpawns runs the changed stage's command n times, one after
// another, each fed a request on stdin as docpipe feeds it.
func benchSpawns(b *testing.B, n int) {
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for range n {
			cmd := exec.Command(backfillBenchCommand[0], backfillBenchCommand[1:]...)
			cmd.Stdin = strings.NewReader(`{"stage":"tag"}`)
			if out, err := cmd.Output(); err != nil || len(out) == 0 {
				b.Fatalf("%v: %v", backfillBenchCommand, err)
			}
		}
		wall += time.Since(start)
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "changed-stage-s")
}

// benchBackfill runs the documents in dirs from scratch, then backfills
// them onto a version that changes only the last stage.
func benchBackfill(b *testing.B, dirs ...string) {
	bin := testbin.Docpipe(b)
	dir := b.TempDir()
	v1, v2 := filepath.Join(dir, "v1.yaml"), filepath.Join(dir, "v2.yaml")
	os.WriteFile(v1, []byte(backfillBenchPipeline("1")), 0o644)
	os.WriteFile(v2, []byte(backfillBenchPipeline("2")), 0o644)
	docpipe := func(args ...string) time.Duration {
		b.Helper()
		start := time.Now()
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			b.Fatalf("docpipe %v: %v\n%s", args, err, out)
		}
		return time.Since(start)
	}
	var scratch, backfill time.Duration
	for i := 0; i < b.N; i++ {
		home := benchHome(b)
		docpipe("pipeline", "apply", v1, "--home", home)
		scratch += docpipe(append([]string{"run", "--pipeline", "bench", "--progress", "none", "--pdf", "go", "--home", home}, dirs...)...)
		docpipe("pipeline", "apply", v2, "--home", home)
		backfill += docpipe("backfill", "--pipeline", "bench", "--progress", "none", "--pdf", "go", "--home", home)
	}
	b.ReportMetric(scratch.Seconds()/float64(b.N), "scratch-s")
	b.ReportMetric(backfill.Seconds()/float64(b.N), "backfill-s")
	b.ReportMetric(100*backfill.Seconds()/scratch.Seconds(), "backfill-%")
}
