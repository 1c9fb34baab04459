package repotest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

// testStepProgress: progress is recorded only while the step runs, leaves
// the step's other attributes alone, and a new attempt starts without it.
func testStepProgress(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	var tick atomic.Int64
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return base.Add(time.Duration(tick.Add(1)) * time.Second) }
	repo := pipeline.NewRepository(tb, pipeline.WithClock(clock))
	f := setup(t, repo)
	step := pipeline.StepFormatParser
	record := func(done int) bool {
		t.Helper()
		ok, err := repo.RecordStepProgress(ctx, f.wf.ID, step, pipeline.StepRunProgress{Done: done, Total: 3000, Unit: "pages"})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if record(1) {
		t.Fatal("progress recorded on a pending step")
	}
	if _, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	before := progress(t, repo, f.wf.ID)
	if !record(10) || !record(750) {
		t.Fatal("progress not recorded on a running step")
	}
	after := progress(t, repo, f.wf.ID)
	st := after.Steps[step]
	if st.Progress == nil || st.Progress.Done != 750 || st.Progress.Total != 3000 || st.Progress.Unit != "pages" || st.Progress.At == "" {
		t.Fatalf("progress %+v", st.Progress)
	}
	if st.Status != pipeline.StepInProgress || st.StartedAt != before.Steps[step].StartedAt || after.UpdatedAt != before.UpdatedAt {
		t.Errorf("progress changed more than itself: %+v, updated %s → %s", st, before.UpdatedAt, after.UpdatedAt)
	}
	if left, ok := st.Progress.Remaining(st.StartedAt); !ok || left <= 0 {
		t.Errorf("remaining %v, %v", left, ok)
	}

	if _, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepFailed, Error: "crashed"}); err != nil {
		t.Fatal(err)
	}
	if record(800) {
		t.Error("progress recorded on a failed step")
	}
	if _, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: []pipeline.StepStatus{pipeline.StepFailed}, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	if p := progress(t, repo, f.wf.ID).Steps[step].Progress; p != nil {
		t.Errorf("a new attempt kept the last one's progress %+v", p)
	}
}
