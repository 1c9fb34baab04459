package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// batchStage is a segment stage in batch mode: one Python process per
// batch of segments, answering each with the length of its text.
const batchStage = `
  - name: chars
    label: Count characters
    scope: segment
    run:
      command: [python3, -c, 'import sys, json; [print(json.dumps({"index": r["segment"]["index"], "chars": len(r["segment"]["text"])}), flush=True) for r in map(json.loads, sys.stdin)]']
      batch: true
`

// BenchmarkBatchStage runs a generated 3,000-page PDF through the
// built-in pipeline, and through the same pipeline plus a one-line Python
// segment stage in batch mode, each run with a fresh home. ns/op is one
// whole `docpipe run`; x-no-stage is how many times the run without the
// stage the run with it takes. The goal is at most 2.
func BenchmarkBatchStage(b *testing.B) {
	bin := testbin.Docpipe(b)
	dir := b.TempDir()
	pdf := filepath.Join(dir, "gen-3000.pdf")
	if err := pdfgen.WriteFile(pdf, pdfgen.Options{Pages: 3000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, "batch.yaml")
	builtin, err := os.ReadFile(filepath.Join("..", "..", "pipeline", "pipelinefile", "default.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	withStage := bytes.Replace(builtin, []byte("\nname: docpipe\n"), []byte("\nname: bench-batch\n"), 1)
	if err := os.WriteFile(file, append(withStage, batchStage...), 0o644); err != nil {
		b.Fatal(err)
	}

	var noStage time.Duration // ns/op of the run without the stage
	b.Run("stage=none", func(b *testing.B) {
		runBatchBench(b, bin, pdf, "")
		noStage = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("stage=python-batch", func(b *testing.B) {
		if _, err := exec.LookPath("python3"); err != nil {
			b.Skip("python3 is not installed")
		}
		runBatchBench(b, bin, pdf, file)
		if noStage > 0 {
			b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/float64(noStage), "x-no-stage")
		}
	})
}

// runBatchBench times `docpipe run` on pdf with the pipeline file applied
// (the built-in pipeline when file is ""); the new home and the apply are
// outside the timing.
func runBatchBench(b *testing.B, bin, pdf, file string) {
	for b.Loop() {
		b.StopTimer()
		home := benchHome(b)
		args := []string{"run", "--home", home, "--progress", "none", "--json"}
		if file != "" {
			if out, err := exec.Command(bin, "pipeline", "apply", "--home", home, file).CombinedOutput(); err != nil {
				b.Fatalf("pipeline apply: %v\n%s", err, out)
			}
			args = append(args, "--pipeline", "bench-batch")
		}
		b.StartTimer()
		if out, err := exec.Command(bin, append(args, pdf)...).CombinedOutput(); err != nil {
			b.Fatalf("docpipe %v: %v\n%s", args, err, lastLine(out))
		}
	}
}
