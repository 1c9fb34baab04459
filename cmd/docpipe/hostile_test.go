package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/internal/racebuild"
	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/extract/pdftext"
	"github.com/docpipe/docpipe/samples/gen/hostile"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// Limits every hostile file must stay within, in a docpipe run of its own.
const (
	hostileWall   = 60 * time.Second
	hostilePeakMB = 512
)

// TestHostileCorpus runs every file of the hostile corpus through a built
// docpipe, with each PDF backend: each must complete, or fail its own
// workflow with a readable reason, within a minute and 512 MB. The full
// corpus holds bombs of a GB decompressed and takes minutes to write and
// run, so it runs only with DOCPIPE_HOSTILE_FULL=1 (make hostile), and
// not with -short; else every file is 1/16 of its size, which still
// reaches every code path.
func TestHostileCorpus(t *testing.T) {
	bin := testbin.Docpipe(t)
	scale := 1.0 / 16
	switch {
	case os.Getenv("DOCPIPE_HOSTILE_FULL") == "1" && !testing.Short():
		scale = 1
	case testing.Short():
		// Under make test docpipe is race-built, which holds it to neither
		// limit; make test-long runs 1/16 on a plain build.
		scale = 1.0 / 128
	}
	t.Logf("corpus at scale %g", scale)
	backends := []string{"go"}
	if pdftext.PopplerAvailable() {
		backends = append(backends, "poppler")
	} else {
		t.Log("PDF backend poppler not run: pdftotext/pdfinfo are not installed")
	}
	dir := t.TempDir()
	for _, f := range hostile.Corpus(scale) {
		path, err := f.WriteFile(dir)
		if err != nil {
			t.Fatalf("writing %s: %v", f.Name, err)
		}
		for _, backend := range backends {
			if backend != "go" && !strings.HasSuffix(f.Name, ".pdf") {
				continue // only PDFs read differently with another backend
			}
			name := f.Name + "/pdf=" + backend
			t.Run(name, func(t *testing.T) {
				if why, ok := hostileLongOnly[name]; ok && testing.Short() {
					t.Skipf("%s; make test-long runs it", why)
				}
				t.Parallel() // each run is a process of its own, measured alone
				runHostile(t, bin, path, backend)
			})
		}
	}
}

// hostileLongOnly are the runs that cost seconds of CPU whatever the
// scale, or only under the race detector, and why: under -short they
// would be half the corpus's time, and make test-long runs each.
var hostileLongOnly = map[string]string{
	"pdf-form-fanout.pdf/pdf=poppler": "pdftotext draws the forms until docpipe's 10 s limit stops it",
	"pdf-objstm-bomb.pdf/pdf=poppler": "pdftotext inflates every object stream, seconds of CPU",
	"md-deep-nesting.md/pdf=go":       "the Markdown parser takes seconds on it under -race (a tenth of that without)",
	"md-references.md/pdf=go":         "the Markdown parser takes seconds on it under -race (a tenth of that without)",
}

func runHostile(t *testing.T, bin, path, backend string) {
	ctx, cancel := context.WithTimeout(context.Background(), hostileWall)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--home", t.TempDir(), "--progress", "none", "--json", "--pdf", backend, path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	peakKiB, err := runPeakRSS(cmd)
	wall := time.Since(start)
	t.Logf("%.1f s, peak RSS %d MB", wall.Seconds(), peakKiB>>10)
	if ctx.Err() != nil {
		t.Fatalf("still running after %v", hostileWall)
	}
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatal(err)
	}
	switch {
	case racebuild.Enabled:
		// The race detector's shadow memory says nothing about docpipe's;
		// make test-long runs this test on a plain build.
		t.Logf("peak RSS not held to %d MB: docpipe is race-instrumented", hostilePeakMB)
	case peakKiB>>10 > hostilePeakMB:
		t.Errorf("peak RSS %d MB, over %d MB", peakKiB>>10, hostilePeakMB)
	}
	var res docResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("no result (%v): %s\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	switch res.Status {
	case string(pipeline.WorkflowCompleted):
		t.Logf("completed: %d segments", res.Segments)
	case string(pipeline.WorkflowFailed):
		if strings.TrimSpace(res.Error) == "" {
			t.Fatalf("failed without a reason: %s", stdout.Bytes())
		}
		t.Logf("failed: %s", res.Error)
	default:
		t.Fatalf("status %q: %s\n%s", res.Status, stdout.Bytes(), stderr.Bytes())
	}
}

// TestHostileStructureBombsAmongOthers runs, in one docpipe run with the
// pure-Go PDF backend, a sound PDF among files whose cross-reference
// numbers once made the process die of an allocation it could not get:
// each bomb fails its own workflow, saying why, and the sound one
// completes.
func TestHostileStructureBombsAmongOthers(t *testing.T) {
	bin := testbin.Docpipe(t)
	dir := t.TempDir()
	sound := filepath.Join(dir, "sound.pdf")
	if err := pdfgen.WriteFile(sound, pdfgen.Options{Pages: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	paths := []string{sound}
	bombs := map[string]struct {
		write func(io.Writer) error
		want  string // what its failure must say
	}{
		"xref-offset.pdf":      {hostile.XrefOffsetBomb, "cross-reference table declares 900000005 objects"},
		"xref-stream-size.pdf": {hostile.XrefStreamSizeBomb, "cross-reference stream declares 2000000000 objects"},
		"xref-loop.pdf":        {hostile.XrefLoop, "cross-reference sections form a loop"},
		"predictor.pdf":        {hostile.PredictorBomb, "/Columns 1099511627776"},
	}
	for name, bomb := range bombs {
		path, err := hostile.File{Name: name, Write: bomb.write}.WriteFile(dir)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hostileWall)
	defer cancel()
	args := append([]string{"run", "--home", t.TempDir(), "--progress", "none", "--json", "--pdf", "go"}, paths...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if _, exited := err.(*exec.ExitError); !exited || ctx.Err() != nil {
			t.Fatalf("%v: %s", err, stderr.Bytes())
		}
	}
	dec := json.NewDecoder(&stdout)
	seen := 0
	for dec.More() {
		var res docResult
		if err := dec.Decode(&res); err != nil {
			t.Fatalf("%v: %s", err, stderr.Bytes())
		}
		seen++
		bomb, isBomb := bombs[filepath.Base(res.File)]
		switch {
		case !isBomb && res.Status != string(pipeline.WorkflowCompleted):
			t.Errorf("%s: %s (%s), want completed", res.File, res.Status, res.Error)
		case isBomb && (res.Status != string(pipeline.WorkflowFailed) || !strings.Contains(res.Error, bomb.want)):
			t.Errorf("%s: %s (%s), want failed saying %q", res.File, res.Status, res.Error, bomb.want)
		}
	}
	if seen != len(paths) {
		t.Fatalf("%d results for %d files: %s", seen, len(paths), stderr.Bytes())
	}
}
