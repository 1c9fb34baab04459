package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/cmd/internal/localrun"
	"github.com/docpipe/docpipe/pipeline"
)

func init() { addCommand(newRerunCmd) }

func newRerunCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rerun [flags] WORKFLOW",
		Short: "Re-run the failed parts of a finished analysis",
		Long: `Re-run what failed in a finished analysis: failed steps, and failed
segments with the graph and summary built from them, leaving finished work
alone. Locally it waits for the result; on AWS (--table, --bucket and
--state-machine) it starts a new execution on Step Functions and returns.`,
		Example: `  docpipe rerun WORKFLOW
  docpipe rerun --home /tmp/dp WORKFLOW --json
  docpipe rerun --table T --bucket B --state-machine ARN WORKFLOW`,
		Args: exactArgs(1, "one WORKFLOW"),
	}
	f := newRunFlags(a, cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if a.onAWS() {
			return awsIngest{app: a}.rerun(cmd.Context(), args[0], a.stdout)
		}
		return rerunLocal(cmd.Context(), f, args[0])
	}
	return cmd
}

// rerunLocal re-runs a workflow of the local home and waits for it.
func rerunLocal(ctx context.Context, f *runFlags, id string) error {
	stdout, stderr := f.stdout, f.stderr
	lp, err := openLocalPipeline(ctx, f, stderr)
	if err != nil {
		return err
	}
	defer lp.Close()
	if err := lp.backend.LockHome(); err != nil {
		return err
	}
	reg, reset, err := prepareRerun(ctx, lp.backend.Repo, id)
	if err != nil {
		return err
	}
	wf := reg.Workflow
	if len(reset) == 0 {
		fmt.Fprintf(stdout, "%s: nothing to re-run (completed, no failed segments)\n", wf.ID)
		return nil
	}
	fmt.Fprintf(stderr, "re-running %s\n", strings.Join(reset, ", "))
	rt := lp.runtime(nil)
	o := &localrun.Outcome{File: wf.FileName, Registration: reg}
	if err := rt.Start(ctx, localrun.Job{File: wf.FileName, Workflow: wf}, func(e localrun.Ended) {
		o.Start, o.End = e.Start, e.End
	}); err != nil {
		return err
	}
	rt.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := lp.result(ctx, o)
	if err != nil {
		return err
	}
	if err := report(stdout, []docResult{r}, f.jsonOut); err != nil {
		return err
	}
	if !r.succeeded() {
		return exitError{1}
	}
	return nil
}

// prepareRerun readies a finished workflow for a re-run of what failed
// (`docpipe rerun`, locally and on AWS, and the dashboard's re-run button).
// It returns the stages it reset, those of the pipeline version the
// workflow records: none means there is nothing to re-run.
func prepareRerun(ctx context.Context, repo *pipeline.Repository, id string) (pipeline.Registration, []string, error) {
	wf, _, err := findWorkflow(ctx, repo, id)
	if err != nil {
		return pipeline.Registration{}, nil, err
	}
	def, err := repo.Definition(ctx, wf.Pipeline, wf.PipelineVersion)
	if err != nil {
		return pipeline.Registration{}, nil, fmt.Errorf("workflow %s: %w", wf.ID, err)
	}
	reg := pipeline.Registration{Workflow: wf}
	reset, err := repo.PrepareRerun(ctx, reg.Ref(), def)
	return reg, reset, err
}
