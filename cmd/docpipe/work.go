package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/cmd/internal/localrun"
	"github.com/docpipe/docpipe/pipeline"
)

// maxUnfinished bounds the unfinished workflows a listing shows, as it
// bounds those one work pass takes up.
const maxUnfinished = localrun.MaxUnfinished

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
	var outMu sync.Mutex // one line per workflow, whole, whichever finishes first
	return lp.runtime(nil).Resume(ctx, func(p pipeline.StepProgress, e localrun.Ended) {
		if ctx.Err() != nil {
			return
		}
		status := "completed"
		if e.Err != nil {
			status = "ended: " + e.Err.Error()
		}
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(stdout, "%s %s %s\n", p.WorkflowID, p.FileName, status)
	})
}
