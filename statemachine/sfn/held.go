package sfn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/docpipe/docpipe/pipeline"
)

// limited reports whether a project caps its running workflows
// (max_concurrent_workflows): its new workflows are admitted before they
// start, and a pending one without an execution is held, not lost.
func (r *Reconciler) limited(ctx context.Context, projectID string) (bool, error) {
	p, err := r.Repo.GetProject(ctx, projectID)
	if errors.Is(err, pipeline.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return p.Settings.MaxConcurrentWorkflows > 0, nil
}

// start starts an admitted workflow on its pipeline version's state
// machine, in the execution named after it (Executor.Start).
func (r *Reconciler) start(ctx context.Context, wf pipeline.Workflow) (string, error) {
	machine := r.StateMachineARN
	if r.StateMachineOf != nil {
		var err error
		if machine, err = r.StateMachineOf(ctx, wf.Pipeline, wf.PipelineVersion); err != nil {
			return "", fmt.Errorf("sfn: state machine of workflow %s: %w", wf.ID, err)
		}
	}
	ref := pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
	ex := &Executor{API: r.API, StateMachineARN: machine, Repo: r.Repo}
	return ex.Start(ctx, pipeline.ExecutionInput{Workflow: ref, Bucket: r.Bucket, ManifestKey: pipeline.ManifestBlobKey(ref)})
}

// StartHeld starts, oldest first, the pending workflows that ingest held
// back because their project was full, as long as their project admits
// them (pipeline.AdmitWorkflow), and returns how many it started. Each
// starts on its pipeline version's state machine in the execution named
// after the workflow, so a sweep that repeats, or races ingest, starts
// nothing twice. Projects without a limit are left alone: ingest never
// holds their workflows.
func (r *Reconciler) StartHeld(ctx context.Context, projectIDs ...string) (int, error) {
	if len(projectIDs) == 0 {
		return 0, nil
	}
	pending, err := r.Repo.ListByStatus(ctx, pipeline.WorkflowPending, 0)
	if err != nil {
		return 0, err
	}
	byProject := map[string][]pipeline.StepProgress{}
	for _, p := range pending {
		if slices.Contains(projectIDs, p.ProjectID) {
			byProject[p.ProjectID] = append(byProject[p.ProjectID], p)
		}
	}
	started := 0
	for project, progs := range byProject {
		if ok, err := r.limited(ctx, project); err != nil || !ok {
			if err != nil {
				return started, err
			}
			continue
		}
		slices.SortFunc(progs, func(a, b pipeline.StepProgress) int {
			return cmp.Or(cmp.Compare(a.UpdatedAt, b.UpdatedAt), cmp.Compare(a.WorkflowID, b.WorkflowID))
		})
		n, err := r.startHeldOf(ctx, progs)
		started += n
		if err != nil {
			return started, err
		}
	}
	return started, nil
}

// startHeldOf admits and starts one project's held workflows until the
// project is full.
func (r *Reconciler) startHeldOf(ctx context.Context, progs []pipeline.StepProgress) (int, error) {
	started := 0
	for _, p := range progs {
		wf, err := r.Repo.GetWorkflow(ctx, p.DocumentID, p.WorkflowID)
		if err != nil {
			return started, err
		}
		if wf.ExecutionID != "" {
			continue // started; its first step moves it on
		}
		ref := pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
		err = r.Repo.AdmitWorkflow(ctx, ref)
		switch {
		case errors.Is(err, pipeline.ErrNotAdmitted):
			return started, nil
		case errors.Is(err, pipeline.ErrStale):
			continue // ended meanwhile
		case err != nil:
			return started, err
		}
		arn, err := r.start(ctx, wf)
		if err != nil {
			return started, err
		}
		r.logger().Info("held workflow started", "workflow", wf.ID, "project", wf.ProjectID, "execution", arn)
		started++
	}
	return started, nil
}
