package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// cmdRerun re-runs what failed in a finished workflow: failed steps, and the
// failed segments with the steps after them, leaving finished work alone.
func cmdRerun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rerun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs)
	var aws awsIngestFlags
	aws.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: docpipe rerun [flags] WORKFLOW\n\nRe-run the failed parts of a finished analysis (failed steps; failed segments and the graph and summary built from them). Locally it waits for the result; with --table, --bucket and --state-machine it starts a new execution on Step Functions and returns.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitError{2}
	}
	if aws.enabled() {
		return aws.rerun(ctx, fs.Arg(0), stdout)
	}
	lp, err := openLocalPipeline(ctx, f, stderr)
	if err != nil {
		return err
	}
	defer lp.Close()
	if err := lp.backend.LockHome(); err != nil {
		return err
	}
	repo := lp.backend.Repo
	wf, _, err := findWorkflow(ctx, repo, fs.Arg(0))
	if err != nil {
		return err
	}
	reg := pipeline.Registration{Workflow: wf}
	reset, err := repo.PrepareRerun(ctx, reg.Ref(), lp.ingester.Definition)
	if err != nil {
		return err
	}
	if len(reset) == 0 {
		fmt.Fprintf(stdout, "%s: nothing to re-run (completed, no failed segments)\n", wf.ID)
		return nil
	}
	fmt.Fprintf(stderr, "re-running %s\n", strings.Join(reset, ", "))
	j := &job{file: wf.FileName, reg: reg, start: time.Now()}
	if err := lp.engine.Run(ctx, lp.ingester.ExecutionInput(reg)); err != nil {
		lp.logger.Debug("execution ended with an error", "error", err)
	}
	j.end = time.Now()
	r, err := lp.result(ctx, j)
	if err != nil {
		return err
	}
	if err := report(stdout, []docResult{r}, f.jsonOut); err != nil {
		return err
	}
	if r.Status != string(pipeline.WorkflowCompleted) {
		return exitError{1}
	}
	return nil
}
