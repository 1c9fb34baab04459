package pipeline_test

import (
	"context"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

func handoffWorkflow(t *testing.T) (*pipeline.Repository, pipeline.WorkflowRef) {
	t.Helper()
	repo, _ := newRepo(t)
	doc := pipeline.Document{ProjectID: "p", ID: "d", SHA256: "abc", FileName: "f.txt"}
	wf := pipeline.Workflow{ID: "w", ProjectID: "p", DocumentID: "d", FileName: "f.txt"}
	if err := repo.CreateWorkflow(t.Context(), doc, wf, pipelinefile.Default().Stages); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}
	if _, err := repo.TransitionSteps(t.Context(), ref, pipeline.StepChange{Step: pipeline.StepSegmentPrep, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	return repo, ref
}

func done(step string, total int) pipeline.StepChange {
	return pipeline.StepChange{Step: step, Seen: pipeline.StepInProgress, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepCompleted, Info: &pipeline.WorkflowInfo{TotalSegments: &total}}
}

// A completion left on the handoff is recorded by whoever takes it, with
// its info and its own time; without a handoff, or once the step's
// context is done, nothing is kept and the caller records it itself.
func TestStepHandoff(t *testing.T) {
	t.Parallel()
	repo, ref := handoffWorkflow(t)
	var none *pipeline.StepHandoff
	if none.Leave(t.Context(), repo, ref, done(pipeline.StepSegmentPrep, 3)) || none.Take(ref) != nil || none.Flush(t.Context()) != nil {
		t.Error("a nil handoff kept a change")
	}
	ctx, h := pipeline.WithStepHandoff(t.Context())
	if pipeline.StepHandoffFrom(ctx) != h || pipeline.StepHandoffFrom(t.Context()) != nil {
		t.Fatal("the context does not carry the handoff")
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if h.Leave(gone, repo, ref, done(pipeline.StepSegmentPrep, 3)) {
		t.Error("a change was left by a step whose context is done")
	}
	if !h.Leave(ctx, repo, ref, done(pipeline.StepSegmentPrep, 3)) {
		t.Fatal("Leave refused a change")
	}
	other := ref
	other.WorkflowID = "v"
	if h.Leave(ctx, repo, other, done(pipeline.StepFormatParser, 1)) || h.Take(other) != nil {
		t.Error("the handoff mixed two workflows")
	}
	left := h.Take(ref)
	if len(left) != 1 || left[0].At.IsZero() || h.Take(ref) != nil {
		t.Fatalf("Take = %+v, then more", left)
	}
	start := pipeline.StepChange{Step: pipeline.StepFormatParser, Seen: pipeline.StepPending, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress}
	if _, err := repo.TransitionSteps(ctx, ref, append(left, start)...); err != nil {
		t.Fatal(err)
	}
	prog, err := repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	want := pipeline.FormatTime(left[0].At)
	if st := prog.Steps[pipeline.StepSegmentPrep]; st.Status != pipeline.StepCompleted || st.EndedAt != want || prog.TotalSegments != 3 {
		t.Errorf("segment_prep %+v, total %d; want completed at %s with 3 segments", st, prog.TotalSegments, want)
	}
	if st := prog.Steps[pipeline.StepFormatParser]; st.Status != pipeline.StepInProgress {
		t.Errorf("format_parser is %s", st.Status)
	}
	wf, err := repo.GetWorkflow(ctx, ref.DocumentID, ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	if wf.TotalSegments != 3 {
		t.Errorf("the workflow item has %d segments, want the info recorded with the change", wf.TotalSegments)
	}

	// Flush records what is left on its own.
	if !h.Leave(ctx, repo, ref, done(pipeline.StepFormatParser, 3)) {
		t.Fatal("Leave refused a change")
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if prog, err = repo.GetProgress(ctx, ref.WorkflowID); err != nil || prog.Steps[pipeline.StepFormatParser].Status != pipeline.StepCompleted {
		t.Errorf("after Flush format_parser is %+v (%v)", prog.Steps[pipeline.StepFormatParser], err)
	}
	if err := h.Flush(ctx); err != nil {
		t.Errorf("a second Flush: %v", err)
	}
}
