package pipeline_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/table"
)

// counted counts the writes (transactions) and item reads a table serves.
type counted struct {
	table.Table
	writes, reads atomic.Int64
}

func (c *counted) Transact(ctx context.Context, actions []table.TxAction) error {
	c.writes.Add(1)
	return c.Table.Transact(ctx, actions)
}

func (c *counted) Get(ctx context.Context, key table.Key) (table.Item, error) {
	c.reads.Add(1)
	return c.Table.Get(ctx, key)
}

// recorderWorkflow is a workflow in progress whose segment_prep has
// started.
func recorderWorkflow(t *testing.T) (*pipeline.Repository, *counted, pipeline.WorkflowRef) {
	t.Helper()
	tb, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	c := &counted{Table: tb}
	repo := pipeline.NewRepository(c)
	doc := pipeline.Document{ProjectID: "p", ID: "d", SHA256: "abc", FileName: "f.txt"}
	wf := pipeline.Workflow{ID: "w", ProjectID: "p", DocumentID: "d", FileName: "f.txt"}
	if err := repo.CreateWorkflow(t.Context(), doc, wf, pipelinefile.Default().Stages); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}
	if _, err := repo.SetWorkflowStatus(t.Context(), ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.TransitionSteps(t.Context(), ref, pipeline.StepChange{Step: pipeline.StepSegmentPrep, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	return repo, c, ref
}

func completed(step string, total int) pipeline.StepChange {
	return pipeline.StepChange{Step: step, Seen: pipeline.StepInProgress, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepCompleted, Info: &pipeline.WorkflowInfo{TotalSegments: &total}}
}

// starting decides to start step, counting its calls.
func starting(step string, calls *int) pipeline.StartFunc {
	return func(p *pipeline.StepProgress) (pipeline.StepStart, error) {
		*calls++
		return pipeline.StepStart{Steps: []pipeline.StepChange{{Step: step, Seen: p.Steps[step].Status, From: []pipeline.StepStatus{pipeline.StepPending, pipeline.StepFailed}, To: pipeline.StepInProgress}}}, nil
	}
}

func progressOf(t *testing.T, repo *pipeline.Repository, ref pipeline.WorkflowRef) pipeline.StepProgress {
	t.Helper()
	p, err := repo.GetProgress(t.Context(), ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A batch recorder writes a step's completion in one transaction with the
// next step's start, with its info and its own time; the start after a
// finish decides from the item kept, without reading it.
func TestBatchRecorderFoldsACompletionIntoTheNextStart(t *testing.T) {
	t.Parallel()
	repo, c, ref := recorderWorkflow(t)
	ctx := t.Context()
	rec := pipeline.BatchRecorder(repo)
	calls := 0
	if _, err := rec.Start(ctx, ref, starting(pipeline.StepFormatParser, &calls)); err != nil {
		t.Fatal(err) // format_parser is pending: the start writes alone
	}
	w0 := c.writes.Load()
	if err := rec.Finish(ctx, ref, completed(pipeline.StepFormatParser, 3)); err != nil {
		t.Fatal(err)
	}
	if got := c.writes.Load() - w0; got != 0 {
		t.Fatalf("Finish wrote %d times; it should leave the completion to the next start", got)
	}
	if st := progressOf(t, repo, ref).Steps[pipeline.StepFormatParser].Status; st != pipeline.StepInProgress {
		t.Fatalf("before the next start the table says format_parser is %s, want in_progress", st)
	}
	w0, r0 := c.writes.Load(), c.reads.Load()
	prog, err := rec.Start(ctx, ref, starting(pipeline.StepOCR, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if w, r := c.writes.Load()-w0, c.reads.Load()-r0; w != 1 || r != 0 {
		t.Errorf("completion and start took %d writes and %d reads, want 1 and 0", w, r)
	}
	if prog.Steps[pipeline.StepFormatParser].Status != pipeline.StepCompleted || prog.Steps[pipeline.StepOCR].Status != pipeline.StepInProgress || prog.TotalSegments != 3 {
		t.Errorf("Start returned %+v", prog)
	}
	stored := progressOf(t, repo, ref)
	fp, ocr := stored.Steps[pipeline.StepFormatParser], stored.Steps[pipeline.StepOCR]
	if fp.Status != pipeline.StepCompleted || ocr.Status != pipeline.StepInProgress || stored.TotalSegments != 3 {
		t.Errorf("format_parser %+v, ocr %+v, total %d", fp, ocr, stored.TotalSegments)
	}
	if fp.EndedAt == "" || fp.EndedAt > ocr.StartedAt {
		t.Errorf("format_parser ended at %q, after ocr started (%q): the completion lost its own time", fp.EndedAt, ocr.StartedAt)
	}
	wf, err := repo.GetWorkflow(ctx, ref.DocumentID, ref.WorkflowID)
	if err != nil || wf.TotalSegments != 3 {
		t.Errorf("the workflow item has %d segments (%v), want the info recorded with the change", wf.TotalSegments, err)
	}
	trs, err := repo.ListTransitions(ctx, ref.WorkflowID)
	if err != nil || len(trs) != 4 {
		t.Errorf("audit = %+v (%v), want 4 transitions, each on its own", trs, err)
	}

	// What is left when the execution ends is flushed on its own, once.
	if err := rec.Finish(ctx, ref, completed(pipeline.StepOCR, 3)); err != nil {
		t.Fatal(err)
	}
	w0 = c.writes.Load()
	if err := rec.Flush(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if got := c.writes.Load() - w0; got != 1 {
		t.Errorf("two flushes wrote %d times, want 1", got)
	}
	if st := progressOf(t, repo, ref).Steps[pipeline.StepOCR].Status; st != pipeline.StepCompleted {
		t.Errorf("after Flush ocr is %s", st)
	}
}

// A crash after a step's finish and before the next start loses only the
// completion, and the table still says the step is in progress: a resumed
// run does the step again and goes on.
func TestBatchRecorderCrashBeforeTheNextStart(t *testing.T) {
	t.Parallel()
	repo, _, ref := recorderWorkflow(t)
	ctx := t.Context()
	rec := pipeline.BatchRecorder(repo)
	if err := rec.Finish(ctx, ref, completed(pipeline.StepSegmentPrep, 2)); err != nil {
		t.Fatal(err)
	}
	rec = nil // the process dies

	prog := progressOf(t, repo, ref)
	if st := prog.Steps[pipeline.StepSegmentPrep].Status; st != pipeline.StepInProgress {
		t.Fatalf("segment_prep is %s after the crash, want in_progress", st)
	}
	// The reconciler fails the workflow; a re-run redoes segment_prep.
	if _, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowFailed, "crashed"); err != nil {
		t.Fatal(err)
	}
	reset, err := repo.PrepareRerun(ctx, ref, pipelinefile.Default())
	if err != nil || len(reset) == 0 || reset[0] != pipeline.StepSegmentPrep {
		t.Fatalf("PrepareRerun reset %v (%v), want segment_prep first", reset, err)
	}
	resumed := pipeline.BatchRecorder(repo)
	calls := 0
	if _, err := resumed.Start(ctx, ref, starting(pipeline.StepSegmentPrep, &calls)); err != nil {
		t.Fatal(err)
	}
	if err := resumed.Finish(ctx, ref, completed(pipeline.StepSegmentPrep, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := resumed.Start(ctx, ref, starting(pipeline.StepFormatParser, &calls)); err != nil {
		t.Fatal(err)
	}
	prog = progressOf(t, repo, ref)
	if prog.Steps[pipeline.StepSegmentPrep].Status != pipeline.StepCompleted || prog.Steps[pipeline.StepFormatParser].Status != pipeline.StepInProgress || prog.TotalSegments != 2 {
		t.Errorf("after the re-run: %+v, %d segments", prog.Steps, prog.TotalSegments)
	}
}

// A start from the kept item is conditional on the workflow: changed by
// anyone else since, the start decides again from a fresh read.
func TestBatchRecorderDecidesAgainWhenTheWorkflowChanged(t *testing.T) {
	t.Parallel()
	repo, _, ref := recorderWorkflow(t)
	ctx := t.Context()
	rec := pipeline.BatchRecorder(repo)
	calls := 0
	if _, err := rec.Start(ctx, ref, starting(pipeline.StepFormatParser, &calls)); err != nil {
		t.Fatal(err)
	}
	if err := rec.Finish(ctx, ref, completed(pipeline.StepFormatParser, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowWaitingReview, ""); err != nil {
		t.Fatal(err)
	}
	var seen []pipeline.WorkflowStatus
	_, err := rec.Start(ctx, ref, func(p *pipeline.StepProgress) (pipeline.StepStart, error) {
		seen = append(seen, p.Status)
		return starting(pipeline.StepOCR, &calls)(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != pipeline.WorkflowInProgress || seen[1] != pipeline.WorkflowWaitingReview {
		t.Errorf("decide saw %v, want the kept status, then the fresh one", seen)
	}
	prog := progressOf(t, repo, ref)
	if prog.Steps[pipeline.StepFormatParser].Status != pipeline.StepCompleted || prog.Steps[pipeline.StepOCR].Status != pipeline.StepInProgress {
		t.Errorf("after the second decision: %+v", prog.Steps)
	}
}

// Failures, and finishes of a task the engine has given up on, are
// written at once; so is everything on a direct recorder.
func TestRecordersWriteAtOnce(t *testing.T) {
	t.Parallel()
	failed := pipeline.StepChange{Step: pipeline.StepSegmentPrep, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepFailed, Error: "boom"}
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name   string
		rec    func(*pipeline.Repository) *pipeline.Recorder
		ctx    context.Context
		change pipeline.StepChange
		want   pipeline.StepStatus
	}{
		{"batch failure", pipeline.BatchRecorder, t.Context(), failed, pipeline.StepFailed},
		{"batch, context done", pipeline.BatchRecorder, gone, completed(pipeline.StepSegmentPrep, 1), pipeline.StepInProgress},
		{"direct completion", pipeline.DirectRecorder, t.Context(), completed(pipeline.StepSegmentPrep, 1), pipeline.StepCompleted},
	} {
		repo, c, ref := recorderWorkflow(t)
		w0 := c.writes.Load()
		err := tc.rec(repo).Finish(tc.ctx, ref, tc.change)
		if tc.ctx.Err() != nil && err == nil {
			t.Errorf("%s: a finish on a done context reported no error", tc.name)
		}
		if tc.ctx.Err() == nil && (err != nil || c.writes.Load()-w0 != 1) {
			t.Errorf("%s: Finish took %d writes (%v), want 1", tc.name, c.writes.Load()-w0, err)
		}
		if st := progressOf(t, repo, ref).Steps[pipeline.StepSegmentPrep].Status; st != tc.want {
			t.Errorf("%s: segment_prep is %s, want %s", tc.name, st, tc.want)
		}
	}
}
