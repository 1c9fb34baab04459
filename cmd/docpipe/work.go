package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
)

// maxUnfinished bounds how many unfinished workflows one work pass picks up.
const maxUnfinished = 100_000

func cmdWork(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("work", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	lp, err := openLocalPipeline(ctx, f, stderr)
	if err != nil {
		return err
	}
	defer lp.Close()
	// Wait for a running `docpipe run` or `work` on the same home, then
	// take whatever is still unfinished.
	if err := lp.backend.WaitLockHome(ctx); err != nil {
		return err
	}
	var todo []pipeline.StepProgress
	for _, st := range []pipeline.WorkflowStatus{pipeline.WorkflowPending, pipeline.WorkflowInProgress} {
		list, err := lp.backend.Repo.ListByStatus(ctx, st, maxUnfinished)
		if err != nil {
			return err
		}
		todo = append(todo, list...)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, f.concurrency))
	for _, p := range todo {
		in := lp.ingester.ExecutionInput(pipeline.Registration{Workflow: pipeline.Workflow{ID: p.WorkflowID, ProjectID: p.ProjectID, DocumentID: p.DocumentID}})
		g.Go(func() error {
			err := lp.engine.Run(gctx, in)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			status := "completed"
			if err != nil {
				status = "ended: " + err.Error()
			}
			fmt.Fprintf(stdout, "%s %s %s\n", p.WorkflowID, p.FileName, status)
			return nil
		})
	}
	return g.Wait()
}
