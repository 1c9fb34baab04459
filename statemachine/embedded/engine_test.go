package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/extract/pdftext"
	"github.com/docpipe/docpipe/pipeline/steps"
	"github.com/docpipe/docpipe/statemachine/embedded"
)

type bundle struct {
	repo     *pipeline.Repository
	ingester *pipeline.Ingester
	engine   *embedded.Engine
}

func setup(t *testing.T) bundle {
	t.Helper()
	dir := t.TempDir()
	tbl, err := sqlitetable.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	blobs, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := pipeline.NewRepository(tbl)
	pdf, err := pdftext.New("go")
	if err != nil {
		t.Fatal(err)
	}
	reg := pipeline.NewRegistry()
	def := pipeline.DefaultDefinition()
	def.BatchSize = 2 // several batches even for small samples
	steps.Register(reg, steps.Deps{Repo: repo, Blobs: blobs, Definition: def, PDF: pdf, TempDir: dir})
	eng, err := embedded.New(reg, blobs, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ig := &pipeline.Ingester{Repo: repo, Blobs: blobs, Definition: def, Bucket: "local"}
	if err := ig.EnsureProject(context.Background(), "p", "p"); err != nil {
		t.Fatal(err)
	}
	return bundle{repo: repo, ingester: ig, engine: eng}
}

func (b bundle) runFile(t *testing.T, path string) pipeline.StepProgress {
	t.Helper()
	ctx := context.Background()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reg, err := b.ingester.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: filepath.Base(path), FileURI: path, Body: f})
	if err != nil {
		t.Fatal(err)
	}
	runErr := b.engine.Run(ctx, b.ingester.ExecutionInput(reg))
	prog, err := b.repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: run error %v, status %s, error %q, segments %d/%d/%d/%d", path, runErr, prog.Status, prog.Error, prog.TotalSegments, prog.SegmentsDone, prog.SegmentsFailed, prog.SegmentsSkipped)
	return prog
}

func TestSamplesComplete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, name := range []string{"letter.txt", "letter-latin1.txt", "notes.md", "page.html", "report.docx"} {
		prog := b.runFile(t, filepath.Join("..", "..", "samples", name))
		if prog.Status != pipeline.WorkflowCompleted {
			t.Errorf("%s: status %s (%s)", name, prog.Status, prog.Error)
		}
		if prog.TotalSegments == 0 || prog.SegmentsDone != prog.TotalSegments {
			t.Errorf("%s: %d of %d segments done", name, prog.SegmentsDone, prog.TotalSegments)
		}
		for step, st := range prog.Steps {
			if st.Status != pipeline.StepCompleted && st.Status != pipeline.StepSkipped && step != pipeline.StepWorkflowFailed && step != pipeline.StepFinalize {
				t.Errorf("%s: step %s is %s", name, step, st.Status)
			}
		}
	}
}
