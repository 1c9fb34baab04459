package main

import (
	"context"

	"github.com/docpipe/docpipe/pipeline"
)

// parkedReviews is a `work` pass's review duty: it times out, escalates
// and announces overdue reviews (one range query on the due dates), then
// returns the parked workflows whose review is decided (one query of the
// decided ones), to run again. A review whose task waits on Step
// Functions is answered by its decision, not here.
func parkedReviews(ctx context.Context, repo *pipeline.Repository) ([]pipeline.StepProgress, error) {
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
