package main

import (
	"os"
	"os/exec"
	"path/filepath"
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

// BenchmarkBackfillLastStage processes 1,000 one-page documents and one
// 3,000-page PDF from scratch, then backfills them onto a version that
// changes only the last stage, and reports both wall times and the
// backfill's share of the first; the two sets also on their own. The
// stage cache spares the extraction and the segment analysis;
// segment_prep, segment_builder, the graph, the summary, the changed stage
// and every workflow's own bookkeeping run again.
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
	b.Run("pdf", func(b *testing.B) { benchBackfill(b, pdf) })
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
