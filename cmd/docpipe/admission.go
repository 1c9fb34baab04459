package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/docpipe/docpipe/pipeline"
)

// admission lets this process's workflows into their projects' slots
// (max_concurrent_workflows): a pending workflow is admitted before it
// runs, or waits until a workflow of its project that this process runs
// ends. The home is locked by one process at a time, so a project full of
// workflows this process does not run was left so by one that died: its
// count is taken again from the workflows in progress.
type admission struct {
	repo    *pipeline.Repository
	mu      sync.Mutex
	running map[string]int // this process's workflows in progress, per project
	freed   chan struct{}  // closed (and replaced) when one of them ends
}

func newAdmission(repo *pipeline.Repository) *admission {
	return &admission{repo: repo, running: map[string]int{}, freed: make(chan struct{})}
}

// enter admits wf (a workflow already under way runs as it is) and
// returns what to call when it stops running here, and the step item as
// the admission left it (nil when it did not change it): the first step
// starts from it instead of reading it again.
func (a *admission) enter(ctx context.Context, wf pipeline.Workflow) (leave func(), admitted *pipeline.StepProgress, err error) {
	ref := pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
	recounted := false
	for {
		prog, err := a.repo.GetProgress(ctx, wf.ID)
		if err != nil {
			return nil, nil, err
		}
		if prog.Status != pipeline.WorkflowPending {
			return a.hold(wf.ProjectID), nil, nil // under way: the engine sees where to go on
		}
		err = a.repo.AdmitWorkflowSeen(ctx, ref, prog)
		switch {
		case err == nil:
			prog.Status = pipeline.WorkflowInProgress
			return a.hold(wf.ProjectID), &prog, nil
		case errors.Is(err, pipeline.ErrStale):
			return a.hold(wf.ProjectID), nil, nil // it moved on, and the engine sees where to
		case !errors.Is(err, pipeline.ErrNotAdmitted):
			return nil, nil, err
		}
		a.mu.Lock()
		mine, freed := a.running[wf.ProjectID], a.freed
		a.mu.Unlock()
		if mine == 0 {
			if recounted {
				return nil, nil, fmt.Errorf("workflow %s stays pending: project %s is at its max_concurrent_workflows with workflows in progress that `docpipe work` resumes", wf.ID, wf.ProjectID)
			}
			if err := a.repo.RecountRunning(ctx, wf.ProjectID); err != nil {
				return nil, nil, err
			}
			recounted = true
			continue
		}
		select {
		case <-freed:
			recounted = false
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

func (a *admission) hold(projectID string) func() {
	a.mu.Lock()
	a.running[projectID]++
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.running[projectID]--
		close(a.freed)
		a.freed = make(chan struct{})
	}
}
