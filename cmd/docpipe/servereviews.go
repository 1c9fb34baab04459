package main

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
)

// reviewPassEvery is how often serve looks for reviews decided elsewhere
// (docpipe review on the same home) and for overdue ones.
const reviewPassEvery = time.Minute

// ReviewDecided asks for a review pass: a decision made in the dashboard
// resumes its parked workflow without waiting for the next tick.
func (s *localStarter) ReviewDecided(pipeline.Review) {
	select {
	case s.decided <- struct{}{}:
	default: // a pass is already due
	}
}

// reviewPass is `docpipe work`'s review duty inside serve: overdue
// reviews are announced, escalated or timed out, and parked workflows
// whose review is decided run again.
func (s *localStarter) reviewPass(ctx context.Context, g *errgroup.Group) {
	parked, err := parkedReviews(ctx, s.lp.backend.Repo)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Warn("review pass", "error", err)
		}
		return
	}
	for _, p := range parked {
		s.run(ctx, g, pipeline.Registration{Workflow: unfinishedWorkflow(p)})
	}
}
