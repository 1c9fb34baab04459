package repotest

import (
	"errors"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

// limitedProject creates a project allowing max workflows at once and n
// pending workflows in it.
func limitedProject(t *testing.T, repo *pipeline.Repository, max, n int) (string, []pipeline.WorkflowRef) {
	t.Helper()
	id := "proj" + pipeline.NewID()
	if err := repo.CreateProject(t.Context(), pipeline.Project{ID: id, Settings: pipeline.ProjectSettings{MaxConcurrentWorkflows: max}}); err != nil {
		t.Fatal(err)
	}
	refs := make([]pipeline.WorkflowRef, n)
	for i := range refs {
		doc := newDocument(id, newSHA())
		wf := newWorkflowFor(doc)
		if err := repo.CreateWorkflow(t.Context(), doc, wf, stages()); err != nil {
			t.Fatal(err)
		}
		refs[i] = refOf(wf)
	}
	return id, refs
}

func wantRunning(t *testing.T, repo *pipeline.Repository, projectID string, want int) {
	t.Helper()
	s, err := repo.GetProjectSlots(t.Context(), projectID)
	if err != nil || s.Running != want {
		t.Fatalf("running count %d (%v), want %d", s.Running, err, want)
	}
}

// testProjectAdmission: a project with max_concurrent_workflows=2 admits
// two workflows and keeps the third pending until a slot is given back by
// an outcome or a parked review; a resumed review takes a slot again; an
// outcome that does not apply gives nothing back.
func testProjectAdmission(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	id, w := limitedProject(t, repo, 2, 3)
	for _, ref := range w[:2] {
		if err := repo.AdmitWorkflow(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}
	if err := repo.AdmitWorkflow(ctx, w[2]); !errors.Is(err, pipeline.ErrNotAdmitted) {
		t.Fatalf("third admission: %v, want ErrNotAdmitted", err)
	}
	pendingSeen := progress(t, repo, w[2].WorkflowID)
	if err := repo.AdmitWorkflowSeen(ctx, w[2], pendingSeen); !errors.Is(err, pipeline.ErrNotAdmitted) {
		t.Fatalf("third admission from what the caller read: %v, want ErrNotAdmitted", err)
	}
	if got := progress(t, repo, w[2].WorkflowID).Status; got != pipeline.WorkflowPending {
		t.Fatalf("the workflow not admitted is %s", got)
	}
	wantRunning(t, repo, id, 2)
	if err := repo.AdmitWorkflow(ctx, w[0]); err != nil {
		t.Fatalf("admitting a running workflow again: %v", err)
	}
	wantRunning(t, repo, id, 2)

	setStatus(t, repo, fixture{repo: repo, ref: w[0]}, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress, pipeline.WorkflowPending}, pipeline.WorkflowCompleted, "")
	wantRunning(t, repo, id, 1)
	if err := repo.AdmitWorkflowSeen(ctx, w[2], pendingSeen); err != nil {
		t.Fatalf("admission after a completion: %v", err)
	}
	wantRunning(t, repo, id, 2)
	// A read gone stale (the workflow was pending when the caller looked)
	// costs a fresh read, not a second slot.
	if err := repo.AdmitWorkflowSeen(ctx, w[2], pendingSeen); err != nil {
		t.Fatalf("admitting a running workflow from a stale read: %v", err)
	}
	wantRunning(t, repo, id, 2)
	if ok, err := repo.SetWorkflowStatus(ctx, w[0], []pipeline.WorkflowStatus{pipeline.WorkflowInProgress, pipeline.WorkflowPending}, pipeline.WorkflowFailed, "late"); ok || !errors.Is(err, pipeline.ErrStale) {
		t.Fatalf("failing a completed workflow: %v, %v", ok, err)
	}
	wantRunning(t, repo, id, 2)

	// A parked review holds no slot; its decision takes one back, over the
	// limit if need be: the decision is made and the workflow goes on.
	setStatus(t, repo, fixture{repo: repo, ref: w[1]}, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowWaitingReview, "")
	wantRunning(t, repo, id, 1)
	setStatus(t, repo, fixture{repo: repo, ref: w[1]}, []pipeline.WorkflowStatus{pipeline.WorkflowWaitingReview}, pipeline.WorkflowInProgress, "")
	wantRunning(t, repo, id, 2)
	for _, ref := range w[1:] {
		setStatus(t, repo, fixture{repo: repo, ref: ref}, []pipeline.WorkflowStatus{pipeline.WorkflowPending, pipeline.WorkflowInProgress}, pipeline.WorkflowFailed, "broke")
	}
	wantRunning(t, repo, id, 0)
}

// testProjectAdmissionLimit: no limit admits everything (and still
// counts); a limit raised after a refusal admits at once.
func testProjectAdmissionLimit(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	id, w := limitedProject(t, repo, 1, 3)
	if err := repo.AdmitWorkflow(ctx, w[0]); err != nil {
		t.Fatal(err)
	}
	if err := repo.AdmitWorkflow(ctx, w[1]); !errors.Is(err, pipeline.ErrNotAdmitted) {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := repo.UpdateProject(ctx, id, func(p *pipeline.Project) error {
		p.Settings.MaxConcurrentWorkflows = 0
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, ref := range w[1:] {
		if err := repo.AdmitWorkflow(ctx, ref); err != nil {
			t.Fatalf("without a limit: %v", err)
		}
	}
	wantRunning(t, repo, id, 3)

	// A workflow of a project that has no project item runs, counted.
	f := setup(t, repo)
	if err := repo.AdmitWorkflow(ctx, f.ref); err != nil {
		t.Fatal(err)
	}
	wantRunning(t, repo, f.ref.ProjectID, 1)
}

// testProjectAdmissionRecount: a count left wrong (a worker died, or
// workflows ran before anything counted) is set from the workflows in
// progress, and the project admits again; an outcome never takes the
// count below zero.
func testProjectAdmissionRecount(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	id, w := limitedProject(t, repo, 2, 3)
	if err := repo.AdmitWorkflow(ctx, w[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Update(ctx, pipeline.ProjectSlotsKey(id), []table.Update{table.Set{Path: "running", Value: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := repo.AdmitWorkflow(ctx, w[1]); !errors.Is(err, pipeline.ErrNotAdmitted) {
		t.Fatalf("with a leaked slot: %v", err)
	}
	other, _ := limitedProject(t, repo, 0, 0)
	if err := repo.RecountRunning(ctx, id, other, id); err != nil {
		t.Fatal(err)
	}
	wantRunning(t, repo, id, 1)
	wantRunning(t, repo, other, 0)
	if err := repo.AdmitWorkflow(ctx, w[1]); err != nil {
		t.Fatalf("after the recount: %v", err)
	}
	wantRunning(t, repo, id, 2)

	if _, err := tb.Update(ctx, pipeline.ProjectSlotsKey(id), []table.Update{table.Set{Path: "running", Value: 0}}, nil); err != nil {
		t.Fatal(err)
	}
	setStatus(t, repo, fixture{repo: repo, ref: w[0]}, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowCompleted, "")
	wantRunning(t, repo, id, 0)
	if err := repo.RecountRunning(ctx, id); err != nil {
		t.Fatal(err)
	}
	wantRunning(t, repo, id, 1)
}

// testProjectAdmissionRace: racing admissions of distinct workflows take
// at most the limit, and the count is what was admitted.
func testProjectAdmissionRace(t *testing.T, tb table.Table, cfg tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	const limit = 3
	id, w := limitedProject(t, repo, limit, min(cfg.Racers, 12))
	var mu sync.Mutex
	admitted := 0
	cfg.Race(len(w), func(i int) {
		err := repo.AdmitWorkflow(ctx, w[i])
		switch {
		case err == nil:
			mu.Lock()
			admitted++
			mu.Unlock()
		case errors.Is(err, pipeline.ErrNotAdmitted), errors.Is(err, table.ErrTransactionConflict):
		default:
			t.Errorf("racer %d: %v", i, err)
		}
	})
	if admitted == 0 || admitted > limit {
		t.Fatalf("%d of %d admitted with a limit of %d", admitted, len(w), limit)
	}
	wantRunning(t, repo, id, admitted)
	inProgress := 0
	for _, ref := range w {
		if progress(t, repo, ref.WorkflowID).Status == pipeline.WorkflowInProgress {
			inProgress++
		}
	}
	if inProgress != admitted {
		t.Fatalf("%d in progress, %d admitted", inProgress, admitted)
	}
}
