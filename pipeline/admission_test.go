package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// pendingWorkflows creates n pending workflows in project p, whose
// max_concurrent_workflows is 1.
func pendingWorkflows(t *testing.T, repo *pipeline.Repository, n int) []pipeline.Workflow {
	t.Helper()
	ctx := t.Context()
	if err := repo.CreateProject(ctx, pipeline.Project{ID: "p", Settings: pipeline.ProjectSettings{MaxConcurrentWorkflows: 1}}); err != nil {
		t.Fatal(err)
	}
	var wfs []pipeline.Workflow
	for _, id := range []string{"a", "b", "c"}[:n] {
		doc := pipeline.Document{ProjectID: "p", ID: "d" + id, SHA256: "sum" + id}
		wf := pipeline.Workflow{ID: "w" + id, ProjectID: "p", DocumentID: doc.ID, Status: pipeline.WorkflowPending}
		if err := repo.CreateWorkflow(ctx, doc, wf, pipelinefile.Default().Stages); err != nil {
			t.Fatal(err)
		}
		wfs = append(wfs, wf)
	}
	return wfs
}

// A workflow of a full project waits for one this process runs to end,
// then is admitted with the step item as its admission left it.
func TestAdmissionWaitsForItsProjectsSlot(t *testing.T) {
	t.Parallel()
	repo, _ := newRepo(t)
	wfs := pendingWorkflows(t, repo, 2)
	a := pipeline.NewAdmission(repo)
	leave, admitted, err := a.Enter(t.Context(), wfs[0])
	if err != nil || admitted == nil || admitted.Status != pipeline.WorkflowInProgress {
		t.Fatalf("first workflow: admitted %+v, %v", admitted, err)
	}
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := a.Enter(short, wfs[1]); err != context.DeadlineExceeded {
		t.Fatalf("second workflow of a full project: %v, want it to wait", err)
	}
	entered := make(chan error, 1)
	go func() {
		leave2, admitted, err := a.Enter(t.Context(), wfs[1])
		if err == nil {
			defer leave2()
			if admitted == nil || admitted.Status != pipeline.WorkflowInProgress {
				t.Errorf("second workflow admitted as %+v", admitted)
			}
		}
		entered <- err
	}()
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: wfs[0].DocumentID, WorkflowID: wfs[0].ID}
	if _, err := repo.SetWorkflowStatus(t.Context(), ref, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowCompleted, ""); err != nil {
		t.Fatal(err)
	}
	leave()
	if err := <-entered; err != nil {
		t.Fatal(err)
	}
}

// A project kept full by a workflow that no process here runs (its
// process died) is recounted once; still full, the workflow stays
// pending with a reason instead of waiting for ever.
func TestAdmissionRecountsAProjectLeftFull(t *testing.T) {
	t.Parallel()
	repo, _ := newRepo(t)
	wfs := pendingWorkflows(t, repo, 2)
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: wfs[0].DocumentID, WorkflowID: wfs[0].ID}
	if err := repo.AdmitWorkflow(t.Context(), ref); err != nil { // another process's, which died
		t.Fatal(err)
	}
	_, _, err := pipeline.NewAdmission(repo).Enter(t.Context(), wfs[1])
	if err == nil || !strings.Contains(err.Error(), "stays pending") {
		t.Fatalf("err = %v, want the workflow to stay pending", err)
	}
}

// A workflow in progress that this process takes up counts as running
// here from its adoption: a pending workflow of its full project that
// enters before it waits for it to end instead of staying pending.
func TestAdmissionWaitsForAnAdoptedWorkflow(t *testing.T) {
	t.Parallel()
	repo, _ := newRepo(t)
	wfs := pendingWorkflows(t, repo, 2)
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: wfs[0].DocumentID, WorkflowID: wfs[0].ID}
	if err := repo.AdmitWorkflow(t.Context(), ref); err != nil { // left in progress by a process that died
		t.Fatal(err)
	}
	a := pipeline.NewAdmission(repo)
	a.Adopt(wfs[0])
	entered := make(chan error, 1)
	go func() {
		leave, admitted, err := a.Enter(t.Context(), wfs[1])
		if err == nil {
			defer leave()
			if admitted == nil || admitted.Status != pipeline.WorkflowInProgress {
				t.Errorf("pending workflow admitted as %+v", admitted)
			}
		}
		entered <- err
	}()
	select {
	case err := <-entered:
		t.Fatalf("pending workflow entered before the adopted one ended: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	leave, admitted, err := a.Enter(t.Context(), wfs[0])
	if err != nil || admitted != nil {
		t.Fatalf("adopted workflow: admitted %+v, %v", admitted, err)
	}
	if _, err := repo.SetWorkflowStatus(t.Context(), ref, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowCompleted, ""); err != nil {
		t.Fatal(err)
	}
	leave()
	if err := <-entered; err != nil {
		t.Fatal(err)
	}
}

// An adoption given up (the workflow will not run here) frees its slot
// as if the workflow had ended.
func TestAdmissionDropFreesAnAdoption(t *testing.T) {
	t.Parallel()
	repo, _ := newRepo(t)
	wfs := pendingWorkflows(t, repo, 2)
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: wfs[0].DocumentID, WorkflowID: wfs[0].ID}
	if err := repo.AdmitWorkflow(t.Context(), ref); err != nil {
		t.Fatal(err)
	}
	a := pipeline.NewAdmission(repo)
	a.Adopt(wfs[0])
	entered := make(chan error, 1)
	go func() {
		_, _, err := a.Enter(t.Context(), wfs[1])
		entered <- err
	}()
	time.Sleep(20 * time.Millisecond)
	a.Drop(wfs[0])
	// Nobody runs wfs[0] now: the project is recounted, still full, and the
	// pending workflow stays pending with its reason.
	if err := <-entered; err == nil || !strings.Contains(err.Error(), "stays pending") {
		t.Fatalf("err = %v, want the workflow to stay pending", err)
	}
}
