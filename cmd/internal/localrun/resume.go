package localrun

import (
	"context"

	"github.com/docpipe/docpipe/pipeline"
)

// MaxUnfinished bounds how many unfinished workflows one pass takes up.
const MaxUnfinished = 100_000

// Resume runs every workflow of the home that is pending, was left in
// progress, or is parked on a review that is now decided (overdue reviews
// are timed out, escalated or announced on the way), and returns once
// they have all ended; ended (may be nil) hears of each. Nothing else may
// run on the home meanwhile: the projects' running counts are set to the
// workflows it resumes, whatever a process that died left.
func (rt *Runtime) Resume(ctx context.Context, ended func(pipeline.StepProgress, Ended)) error {
	todo, err := rt.Unfinished(ctx)
	if err != nil {
		return err
	}
	parked, err := rt.ParkedReviews(ctx)
	if err != nil {
		return err
	}
	todo = append(todo, parked...)
	if err := rt.takeUp(ctx, todo); err != nil {
		return err
	}
	var startErr error
	for i, p := range todo {
		var report func(Ended)
		if ended != nil {
			report = func(e Ended) { ended(p, e) }
		}
		if startErr = rt.Start(ctx, resumeJob(p), report); startErr != nil {
			for _, left := range todo[i+1:] {
				rt.admission.Drop(resumeJob(left).Workflow)
			}
			break
		}
	}
	rt.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return startErr
}

// takeUp readies workflows left unfinished on the home to run here: the
// projects' running counts are set to the workflows in progress, and
// those count as this process's from now on (before they enter), so that
// a pending workflow of their project waits for them to end instead of
// finding its project full of workflows no process runs.
func (rt *Runtime) takeUp(ctx context.Context, todo []pipeline.StepProgress) error {
	projects := make([]string, 0, len(todo))
	for _, p := range todo {
		projects = append(projects, p.ProjectID)
	}
	if err := rt.repo.RecountRunning(ctx, projects...); err != nil {
		return err
	}
	for _, p := range todo {
		if p.Status == pipeline.WorkflowInProgress {
			rt.admission.Adopt(resumeJob(p).Workflow)
		}
	}
	return nil
}

// Unfinished lists the workflows that are in progress, then those
// pending: started in that order, the ones under way take their slots
// before pending ones that may wait for them.
func (rt *Runtime) Unfinished(ctx context.Context) ([]pipeline.StepProgress, error) {
	var todo []pipeline.StepProgress
	for _, st := range []pipeline.WorkflowStatus{pipeline.WorkflowInProgress, pipeline.WorkflowPending} {
		list, err := rt.repo.ListByStatus(ctx, st, MaxUnfinished)
		if err != nil {
			return nil, err
		}
		todo = append(todo, list...)
	}
	return todo, nil
}

// ParkedReviews is a pass's review duty: it times out, escalates and
// announces overdue reviews (one range query on the due dates), then
// returns the parked workflows whose review is decided (one query of the
// decided ones), to run again. A review whose task waits on Step
// Functions is answered by its decision, not here.
func (rt *Runtime) ParkedReviews(ctx context.Context) ([]pipeline.StepProgress, error) {
	repo := rt.repo
	if _, err := repo.SweepOverdueReviews(ctx); err != nil {
		return nil, err
	}
	decided, err := repo.ListDecidedReviews(ctx)
	if err != nil {
		return nil, err
	}
	var out []pipeline.StepProgress
	seen := map[string]bool{}
	for _, v := range decided {
		if v.TaskToken != "" || seen[v.WorkflowID] {
			continue
		}
		seen[v.WorkflowID] = true
		p, err := repo.GetProgress(ctx, v.WorkflowID)
		if err != nil {
			return nil, err
		}
		if p.Status == pipeline.WorkflowWaitingReview {
			out = append(out, p)
		}
	}
	return out, nil
}

// resumeJob is a workflow listed by status as a job: its keys and the
// pipeline version it records; its size is read when it is scheduled.
func resumeJob(p pipeline.StepProgress) Job {
	return Job{File: p.FileName, Workflow: pipeline.Workflow{
		ID: p.WorkflowID, ProjectID: p.ProjectID, DocumentID: p.DocumentID,
		Pipeline: p.Pipeline, PipelineVersion: p.PipelineVersion,
	}}
}
