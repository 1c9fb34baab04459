package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
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
--all lists recent analyses of every status, newest first, with their
outcome and segment counts, a page at a time (--after goes on), filtered
by --status, --project and --pipeline.
With WORKFLOW: every step of it, with start, end, duration and error.

Times are shown in the local time zone; --json prints them as RFC 3339.`,
		Example: `  docpipe status
  docpipe status --failed --json
  docpipe status --all
  docpipe status --all --status completed --project contracts
  docpipe status WORKFLOW
  docpipe status --pipeline redact
  docpipe status --table T --bucket B --failed`,
		Args: maxArgs(1, "one WORKFLOW"),
	}
	failed := cmd.Flags().Bool("failed", false, "list failed analyses instead of those in progress")
	all := cmd.Flags().Bool("all", false, "list recent analyses of every status, newest first")
	onlyStatus := cmd.Flags().String("status", "", "with --all: only analyses in this status ("+strings.Join(workflowStatuses(), ", ")+")")
	after := cmd.Flags().String("after", "", "with --all: the page after this one (the cursor the previous page printed)")
	limit := cmd.Flags().Int("limit", 50, "at most this many analyses (0: all; with --all, a page)")
	pipelineName := cmd.Flags().String("pipeline", "", "list the workflows that run this pipeline, newest first")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if *limit < 0 {
			return usageErrorf("--limit must be 0 (all) or more, not %d", *limit)
		}
		if !*all && (*onlyStatus != "" || *after != "") {
			return usageErrorf("--status and --after page through --all; add --all")
		}
		if *all {
			if len(args) > 0 || *failed {
				return usageErrorf("--all lists analyses; it takes no WORKFLOW and no --failed (--status failed filters)")
			}
			if *onlyStatus != "" && !slices.Contains(workflowStatuses(), *onlyStatus) {
				return usageErrorf("--status %q: choose one of %s", *onlyStatus, strings.Join(workflowStatuses(), ", "))
			}
			f := pipeline.RecentFilter{Pipeline: *pipelineName, Status: pipeline.WorkflowStatus(*onlyStatus)}
			if cmd.Flags().Changed("project") {
				f.Project = a.project
			}
			return statusAll(cmd.Context(), a, f, *limit, *after)
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

// workflowStatuses are the statuses an analysis can be in.
func workflowStatuses() []string {
	return []string{string(pipeline.WorkflowPending), string(pipeline.WorkflowInProgress), string(pipeline.WorkflowWaitingReview),
		string(pipeline.WorkflowCompleted), string(pipeline.WorkflowFailed)}
}

// noAnalysesYet is every listing of analyses on a state home nothing has
// run in.
const noAnalysesYet = "no analyses yet: docpipe run FILE"

// recentPage is `status --all --json`: a page and the cursor of the next.
type recentPage struct {
	Analyses []pipeline.StepProgress `json:"analyses"`
	Next     string                  `json:"next,omitempty"`
}

// statusAll is `status --all`: recent analyses of every status, newest
// first, a page at a time.
func statusAll(ctx context.Context, a *app, f pipeline.RecentFilter, limit int, after string) error {
	if limit == 0 {
		limit = maxUnfinished
	}
	b, err := a.openSource(ctx)
	if noState(err) {
		if a.jsonOut {
			return writeJSON(a.stdout, recentPage{Analyses: []pipeline.StepProgress{}})
		}
		_, err := fmt.Fprintln(a.stdout, noAnalysesYet)
		return err
	}
	if err != nil {
		return err
	}
	defer b.Close()
	list, next, err := b.Repo.ListRecent(ctx, f, limit, after)
	if errors.Is(err, pipeline.ErrBadCursor) {
		return usageErrorf("--after %v", err)
	}
	if err != nil {
		return err
	}
	if a.jsonOut {
		return writeJSON(a.stdout, recentPage{Analyses: list, Next: next})
	}
	if len(list) == 0 && next == "" {
		fmt.Fprintln(a.stdout, "no analyses")
		return nil
	}
	t := newTextTable(a.stdout, "WORKFLOW", "FILE", "PROJECT", "PIPELINE", "STATUS", "SEGMENTS", "FAILED", "UPDATED", "ERROR")
	for _, p := range list {
		t.row(p.WorkflowID, p.FileName, p.ProjectID, pipelineText(p), p.Outcome(),
			fmt.Sprintf("%d/%d", segmentsFinished(p), p.TotalSegments), p.SegmentsFailed, localTime(p.UpdatedAt), p.Error)
	}
	if err := t.flush(); err != nil || next == "" {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "\nmore: docpipe status --all --after %s\n", next)
	return err
}

// pipelineText names the pipeline version an analysis runs.
func pipelineText(p pipeline.StepProgress) string {
	if p.Pipeline == "" {
		return "-"
	}
	return fmt.Sprintf("%s@%d", p.Pipeline, p.PipelineVersion)
}

func status(ctx context.Context, a *app, args []string, failed bool, limit int) error {
	stdout := a.stdout
	if limit == 0 {
		limit = maxUnfinished
	}
	b, err := a.openSource(ctx)
	if noState(err) && len(args) == 0 {
		if a.jsonOut {
			return writeJSON(stdout, []pipeline.StepProgress{})
		}
		_, err := fmt.Fprintln(stdout, noAnalysesYet)
		return err
	}
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
		fmt.Fprintf(stdout, "no analyses %s; docpipe status --all lists every one\n", what)
		return nil
	}
	t := newTextTable(stdout, "WORKFLOW", "FILE", "STATUS", "STEP", "SEGMENTS", "FAILED", "UPDATED", "ERROR")
	for _, p := range list {
		t.row(p.WorkflowID, p.FileName, p.Status, statusStep(p),
			fmt.Sprintf("%d/%d", segmentsFinished(p), p.TotalSegments), p.SegmentsFailed, localTime(p.UpdatedAt), p.Error)
	}
	if err := t.flush(); err != nil || failed {
		return err
	}
	return writeStatusCounts(ctx, stdout, b.Repo, counts)
}

// statusStep is the STEP column: the step a failed workflow failed in
// (its STATUS already says failed), else what it is doing.
func statusStep(p pipeline.StepProgress) string {
	if step := p.FailedStep(); step != "" {
		return step
	}
	return p.Doing()
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
// its document, under which the workflow metadata lives. A document's id
// stands for the document's latest workflow.
func findWorkflow(ctx context.Context, repo *pipeline.Repository, id string) (pipeline.Workflow, pipeline.StepProgress, error) {
	prog, err := repo.GetProgress(ctx, id)
	if errors.Is(err, pipeline.ErrNotFound) {
		if wf, found, lerr := repo.LatestDocumentWorkflow(ctx, id); lerr != nil {
			return pipeline.Workflow{}, prog, lerr
		} else if found {
			id = wf.ID
			prog, err = repo.GetProgress(ctx, id)
		}
	}
	if err != nil {
		return pipeline.Workflow{}, prog, missing(fmt.Errorf("workflow %s: %w", id, err), "no workflow or document "+id+" here; `docpipe status --all` lists the analyses")
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
	fmt.Fprintf(w, "workflow  %s\nfile      %s\nformat    %s\nstatus    %s\n", d.Workflow.ID, printable(d.Workflow.FileName), d.Workflow.MIMEType, p.Status)
	fmt.Fprintf(w, "segments  %d total, %d done, %d failed, %d skipped\n", p.TotalSegments, p.SegmentsDone, p.SegmentsFailed, p.SegmentsSkipped)
	if p.Error != "" {
		fmt.Fprintf(w, "error     %s\n", printable(p.Error))
	}
	if s := d.Workflow.Supersedes; s != "" {
		fmt.Fprintf(w, "supersedes     %s\n", s)
	}
	if s := d.Workflow.SupersededBy; s != "" {
		fmt.Fprintf(w, "superseded by  %s\n", s)
	}
	fmt.Fprintln(w)
	t := newTextTable(w, "STEP", "STATUS", "STARTED", "ENDED", "TOOK", "NOTE")
	for _, s := range d.Steps {
		status, note := string(s.Status), s.Error
		if s.Reused() {
			status, note = "reused", strings.TrimPrefix(note+"; ", "; ")+"from "+s.ReusedFrom
		}
		t.row(s.Name, status, localTime(s.StartedAt), localTime(s.EndedAt), took(s.StartedAt, s.EndedAt), note)
	}
	if err := t.flush(); err != nil || len(d.Events) == 0 {
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
