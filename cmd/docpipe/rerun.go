package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/cmd/internal/localrun"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
)

func init() { addCommand(newRerunCmd) }

func newRerunCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rerun [flags] WORKFLOW",
		Short: "Re-run the failed parts of a finished analysis, or every stage from one on",
		Long: `Re-run what failed in a finished analysis: failed steps, and failed
segments with the graph and summary built from them, leaving finished work
alone. With --from STAGE, run that stage and every stage after it again,
on the workflow's own pipeline version; a stage whose definition and
inputs did not change reuses its earlier output (--no-cache runs it).
Locally it waits for the result; on AWS (--table, --bucket and
--state-machine) it starts a new execution on Step Functions and returns.`,
		Example: `  docpipe rerun WORKFLOW
  docpipe rerun --from summarize WORKFLOW
  docpipe rerun --home /tmp/dp WORKFLOW --json
  docpipe rerun --table T --bucket B --state-machine ARN WORKFLOW`,
		Args: exactArgs(1, "one WORKFLOW"),
	}
	f := newRunFlags(a, cmd.Flags())
	var scope rerunScope
	cmd.Flags().StringVar(&scope.from, "from", "", "run this stage and every stage after it again (default: what failed)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		scope.noCache = f.noCache
		if a.onAWS() {
			return awsIngest{app: a}.rerun(cmd.Context(), args[0], scope, a.stdout)
		}
		return rerunLocal(cmd.Context(), f, args[0], scope)
	}
	return cmd
}

// rerunScope is what a re-run redoes: what failed (from empty), or the
// stage from and every stage after it.
type rerunScope struct {
	from    string
	noCache bool
}

// rerunLocal re-runs a workflow of the local home and waits for it.
func rerunLocal(ctx context.Context, f *runFlags, id string, scope rerunScope) error {
	stdout, stderr := f.stdout, f.stderr
	lp, err := openLocalPipeline(ctx, f, stderr)
	if err != nil {
		return err
	}
	defer lp.Close()
	if err := lp.backend.LockHome(); err != nil {
		return err
	}
	reg, reset, err := prepareRerunScope(ctx, lp.backend.Repo, lp.backend.Blobs, id, scope)
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
	sayReused(ctx, stderr, lp.backend.Repo, wf.ID, reset)
	if !r.succeeded() {
		return exitError{1}
	}
	return nil
}

// sayReused tells which of the stages a re-run reset answered without
// running, their definition and inputs unchanged: someone who asked for
// them again may have meant --no-cache. It is advice on a re-run already
// reported, so a failed read leaves it out rather than fail the command.
func sayReused(ctx context.Context, w io.Writer, repo *pipeline.Repository, id string, reset []string) {
	prog, err := repo.GetProgress(ctx, id)
	if err != nil {
		return
	}
	var reused []string
	for _, name := range reset {
		if prog.Steps[name].NotRun() {
			reused = append(reused, name)
		}
	}
	if len(reused) > 0 {
		fmt.Fprintf(w, "not run again, their definition and inputs unchanged: %s (--no-cache runs them)\n", strings.Join(reused, ", "))
	}
}

// prepareRerunScope readies a finished workflow for the re-run scope asks
// for: prepareRerun's, or every stage from scope.from on. The reset
// segment stages' stored answers are removed, so that they answer every
// segment again: a stage the cache serves looks every open segment up
// there (finding its earlier answer where nothing changed), any other
// runs them.
func prepareRerunScope(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, id string, scope rerunScope) (pipeline.Registration, []string, error) {
	if scope.from == "" {
		return prepareRerun(ctx, repo, id)
	}
	wf, _, err := findWorkflow(ctx, repo, id)
	if err != nil {
		return pipeline.Registration{}, nil, err
	}
	def, err := repo.WorkflowDefinition(ctx, wf)
	if err != nil {
		return pipeline.Registration{}, nil, err
	}
	reg := pipeline.Registration{Workflow: wf}
	if _, ok := def.Stage(scope.from); !ok {
		return reg, nil, usageErrorf("%s runs %s, which has no stage %q; its stages: %s", wf.ID, pipeline.PipelineKey(wf.Pipeline, wf.PipelineVersion), scope.from, strings.Join(def.StepNames(), ", "))
	}
	done, err := repo.PrepareRerunFrom(ctx, reg.Ref(), def, scope.from, scope.noCache)
	if err != nil {
		return reg, nil, err
	}
	for _, st := range done.SegmentStages {
		if !scope.noCache && pipeline.StageCached(st) {
			continue
		}
		prefix := pipeline.SegmentStageBlobPrefix(reg.Ref(), st)
		infos, err := blobs.List(ctx, prefix)
		if err != nil {
			return reg, nil, err
		}
		for _, info := range infos {
			if err := blobs.Delete(ctx, info.Key); err != nil {
				return reg, nil, err
			}
		}
	}
	return reg, append(done.Stages, pipeline.StepFinalize), nil
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
	def, err := repo.WorkflowDefinition(ctx, wf)
	if err != nil {
		return pipeline.Registration{}, nil, err
	}
	reg := pipeline.Registration{Workflow: wf}
	reset, err := repo.PrepareRerun(ctx, reg.Ref(), def)
	return reg, reset, err
}
