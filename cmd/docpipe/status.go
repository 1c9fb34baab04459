package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

func init() { addCommand(newStatusCmd) }

func newStatusCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status [flags] [WORKFLOW]",
		Short: "Analyses in progress, waiting for review or failed, or every step of one",
		Long: `Without WORKFLOW: analyses in progress (pending or running) and those
waiting for a review, newest first, from the status index, then how many of
each there are and how many reviews are overdue; --failed lists failed ones.
With WORKFLOW: every step of it, with start, end, duration and error.

Times are shown in the local time zone; --json prints them as RFC 3339.`,
		Example: `  docpipe status
  docpipe status --failed --json
  docpipe status WORKFLOW
  docpipe status --pipeline redact
  docpipe status --table T --bucket B --failed`,
		Args: maxArgs(1, "one WORKFLOW"),
	}
	failed := cmd.Flags().Bool("failed", false, "list failed analyses instead of those in progress")
	limit := cmd.Flags().Int("limit", 50, "at most this many analyses (0: all)")
	pipelineName := cmd.Flags().String("pipeline", "", "list the workflows that run this pipeline, newest first")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if *limit < 0 {
			return usageErrorf("--limit must be 0 (all) or more, not %d", *limit)
		}
		if *pipelineName != "" {
			if len(args) > 0 || *failed {
				return usageErrorf("--pipeline lists workflows; it takes no WORKFLOW and no --failed")
			}
			return pipelineStatus(cmd.Context(), a, *pipelineName, *limit)
		}
		return status(cmd.Context(), a, args, *failed, *limit)
	}
	return cmd
}

func status(ctx context.Context, a *app, args []string, failed bool, limit int) error {
	stdout := a.stdout
	if limit == 0 {
		limit = maxUnfinished
	}
	b, err := a.openSource(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	if len(args) > 0 {
		return statusDetail(ctx, b.Repo, args[0], a.jsonOut, stdout)
	}
	statuses := []pipeline.WorkflowStatus{pipeline.WorkflowInProgress, pipeline.WorkflowPending, pipeline.WorkflowWaitingReview}
	if failed {
		statuses = []pipeline.WorkflowStatus{pipeline.WorkflowFailed}
	}
	var list []pipeline.StepProgress
	for _, st := range statuses {
		items, err := b.Repo.ListByStatus(ctx, st, limit)
		if err != nil {
			return err
		}
		list = append(list, items...)
	}
	counts := countStatuses(list)
	// Pending, running and parked analyses come from one index query
	// each: merge them newest first.
	sort.SliceStable(list, func(i, j int) bool { return list[i].UpdatedAt > list[j].UpdatedAt })
	if len(list) > limit {
		list = list[:limit]
	}
	if a.jsonOut {
		if list == nil {
			list = []pipeline.StepProgress{}
		}
		return writeJSON(stdout, list)
	}
	if len(list) == 0 {
		what := "in progress"
		if failed {
			what = "failed"
		}
		fmt.Fprintf(stdout, "no analyses %s\n", what)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKFLOW\tFILE\tSTATUS\tSTEP\tSEGMENTS\tFAILED\tUPDATED\tERROR")
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%d\t%s\t%s\n", p.WorkflowID, p.FileName, p.Status, currentStep(p),
			segmentsFinished(p), p.TotalSegments, p.SegmentsFailed, localTime(p.UpdatedAt), p.Error)
	}
	if err := tw.Flush(); err != nil || failed {
		return err
	}
	return writeStatusCounts(ctx, stdout, b.Repo, counts)
}

// countStatuses counts analyses by status.
func countStatuses(list []pipeline.StepProgress) map[pipeline.WorkflowStatus]int {
	counts := map[pipeline.WorkflowStatus]int{}
	for _, p := range list {
		counts[p.Status]++
	}
	return counts
}

// writeStatusCounts is the line under the unfinished analyses: running and
// pending apart from those parked on a review, which wait for a person
// rather than for docpipe, with the overdue reviews (one range query).
func writeStatusCounts(ctx context.Context, w io.Writer, repo *pipeline.Repository, counts map[pipeline.WorkflowStatus]int) error {
	fmt.Fprintf(w, "\n%d in progress, %d pending, %d waiting for review",
		counts[pipeline.WorkflowInProgress], counts[pipeline.WorkflowPending], counts[pipeline.WorkflowWaitingReview])
	if counts[pipeline.WorkflowWaitingReview] == 0 {
		_, err := fmt.Fprintln(w)
		return err
	}
	overdue, err := repo.ListOverdueReviews(ctx, time.Now())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, " (%d overdue): docpipe review list\n", len(overdue))
	return err
}

// workflowDetail is `status WORKFLOW --json`.
type workflowDetail struct {
	Workflow    pipeline.Workflow      `json:"workflow"`
	Progress    pipeline.StepProgress  `json:"progress"`
	Steps       []namedStep            `json:"steps"`
	Transitions []pipeline.Transition  `json:"transitions"`
	Events      []pipeline.OutboxEntry `json:"events"` // outcome events and their delivery
}

type namedStep struct {
	Name string `json:"name"`
	pipeline.StepState
}

// findWorkflow reads a workflow known only by its id: the step item names
// its document, under which the workflow metadata lives.
func findWorkflow(ctx context.Context, repo *pipeline.Repository, id string) (pipeline.Workflow, pipeline.StepProgress, error) {
	prog, err := repo.GetProgress(ctx, id)
	if err != nil {
		return pipeline.Workflow{}, prog, fmt.Errorf("workflow %s: %w", id, err)
	}
	wf, err := repo.GetWorkflow(ctx, prog.DocumentID, id)
	return wf, prog, err
}

func loadDetail(ctx context.Context, repo *pipeline.Repository, id string) (workflowDetail, error) {
	wf, prog, err := findWorkflow(ctx, repo, id)
	if err != nil {
		return workflowDetail{}, err
	}
	trs, err := repo.ListTransitions(ctx, id)
	if err != nil {
		return workflowDetail{}, err
	}
	evs, err := repo.ListWorkflowEvents(ctx, id)
	if err != nil {
		return workflowDetail{}, err
	}
	d := workflowDetail{Workflow: wf, Progress: prog, Transitions: trs, Events: evs}
	for _, name := range stepOrder(ctx, repo, wf, prog) {
		d.Steps = append(d.Steps, namedStep{Name: name, StepState: prog.Steps[name]})
	}
	return d, nil
}

// stepOrder lists the steps of a workflow's step item in the order of the
// pipeline version it runs, then any the version does not name (a version
// that cannot be read) by name.
func stepOrder(ctx context.Context, repo *pipeline.Repository, wf pipeline.Workflow, prog pipeline.StepProgress) []string {
	names := pipelinefile.Default().StepNames()
	if def, err := repo.Definition(ctx, wf.Pipeline, wf.PipelineVersion); err == nil {
		names = def.StepNames()
	}
	var order []string
	for _, name := range names {
		if _, ok := prog.Steps[name]; ok {
			order = append(order, name)
		}
	}
	var rest []string
	for name := range prog.Steps {
		if !slices.Contains(order, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(order, rest...)
}

func statusDetail(ctx context.Context, repo *pipeline.Repository, id string, asJSON bool, w io.Writer) error {
	d, err := loadDetail(ctx, repo, id)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, d)
	}
	p := d.Progress
	fmt.Fprintf(w, "workflow  %s\nfile      %s\nformat    %s\nstatus    %s\n", d.Workflow.ID, d.Workflow.FileName, d.Workflow.MIMEType, p.Status)
	fmt.Fprintf(w, "segments  %d total, %d done, %d failed, %d skipped\n", p.TotalSegments, p.SegmentsDone, p.SegmentsFailed, p.SegmentsSkipped)
	if p.Error != "" {
		fmt.Fprintf(w, "error     %s\n", p.Error)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSTATUS\tSTARTED\tENDED\tTOOK\tNOTE")
	for _, s := range d.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Status, localTime(s.StartedAt), localTime(s.EndedAt), took(s.StartedAt, s.EndedAt), s.Error)
	}
	if err := tw.Flush(); err != nil || len(d.Events) == 0 {
		return err
	}
	fmt.Fprintln(w)
	return writeEvents(w, d.Events, true)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
