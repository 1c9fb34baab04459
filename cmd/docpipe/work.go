package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
)

// maxUnfinished bounds how many unfinished workflows one work pass picks up.
const maxUnfinished = 100_000

func init() { addCommand(newWorkCmd) }

func newWorkCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "work [flags]",
		Short: "Process every unfinished workflow in --home",
		Long: `Process every workflow of the local home that is pending or was left in
progress (by ` + "`docpipe ingest`" + `, or by a run that was killed), then exit.
It waits for a ` + "`docpipe run`" + ` on the same home to finish first. ` + "`docpipe ingest`" + `
starts it in the background.`,
		Example: `  docpipe work
  docpipe work --home /tmp/dp --concurrency 4`,
		Args: exactArgs(0, "no arguments"),
	}
	f := newRunFlags(a, cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.localOnly(cmd); err != nil {
			return err
		}
		return work(cmd.Context(), f)
	}
	return cmd
}

func work(ctx context.Context, f *runFlags) error {
	stdout, stderr := f.stdout, f.stderr
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
	stopRelay, err := startRelay(ctx, lp.backend, f.notify, f.allowPrivate, lp.logger)
	if err != nil {
		return err
	}
	defer stopRelay()
	var todo []pipeline.StepProgress
	for _, st := range []pipeline.WorkflowStatus{pipeline.WorkflowPending, pipeline.WorkflowInProgress} {
		list, err := lp.backend.Repo.ListByStatus(ctx, st, maxUnfinished)
		if err != nil {
			return err
		}
		todo = append(todo, list...)
	}
	// Parked workflows whose review is decided go on; overdue reviews are
	// announced, escalated or timed out.
	parked, err := parkedReviews(ctx, lp.backend.Repo)
	if err != nil {
		return err
	}
	todo = append(todo, parked...)
	// Nothing else runs on this home now: the projects' running counts are
	// the workflows this pass resumes, whatever a worker that died left.
	projects := make([]string, 0, len(todo))
	for _, p := range todo {
		projects = append(projects, p.ProjectID)
	}
	if err := lp.backend.Repo.RecountRunning(ctx, projects...); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, f.concurrency))
	var outMu sync.Mutex // one line per workflow, whole, whichever finishes first
	for _, p := range todo {
		g.Go(func() error {
			err := lp.runWorkflow(gctx, unfinishedWorkflow(p))
			if ctx.Err() != nil {
				return ctx.Err()
			}
			status := "completed"
			if err != nil {
				status = "ended: " + err.Error()
			}
			outMu.Lock()
			defer outMu.Unlock()
			fmt.Fprintf(stdout, "%s %s %s\n", p.WorkflowID, p.FileName, status)
			return nil
		})
	}
	return g.Wait()
}

// unfinishedWorkflow is what running a workflow listed by status needs:
// its keys and the pipeline version it records.
func unfinishedWorkflow(p pipeline.StepProgress) pipeline.Workflow {
	return pipeline.Workflow{
		ID: p.WorkflowID, ProjectID: p.ProjectID, DocumentID: p.DocumentID,
		Pipeline: p.Pipeline, PipelineVersion: p.PipelineVersion,
	}
}
