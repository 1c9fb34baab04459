package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/docpipe/docpipe/pipeline"
)

func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var src sourceFlags
	src.register(fs)
	failed := fs.Bool("failed", false, "list failed analyses instead of those in progress")
	limit := fs.Int("limit", 50, "at most this many analyses (0: all)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: docpipe status [flags] [WORKFLOW]\n\nWithout WORKFLOW: analyses in progress (pending or running), newest first, from the status index; --failed lists failed ones. With WORKFLOW: every step of it.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *limit < 0 {
		return fmt.Errorf("--limit must be 0 (all) or more, not %d", *limit)
	}
	if *limit == 0 {
		*limit = maxUnfinished
	}
	b, err := src.open(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	if fs.NArg() > 0 {
		return statusDetail(ctx, b.Repo, fs.Arg(0), src.jsonOut, stdout)
	}
	statuses := []pipeline.WorkflowStatus{pipeline.WorkflowInProgress, pipeline.WorkflowPending}
	if *failed {
		statuses = []pipeline.WorkflowStatus{pipeline.WorkflowFailed}
	}
	var list []pipeline.StepProgress
	for _, st := range statuses {
		items, err := b.Repo.ListByStatus(ctx, st, *limit)
		if err != nil {
			return err
		}
		list = append(list, items...)
	}
	// Pending and running analyses come from two index queries: merge
	// them newest first.
	sort.SliceStable(list, func(i, j int) bool { return list[i].UpdatedAt > list[j].UpdatedAt })
	if len(list) > *limit {
		list = list[:*limit]
	}
	if src.jsonOut {
		if list == nil {
			list = []pipeline.StepProgress{}
		}
		return writeJSON(stdout, list)
	}
	if len(list) == 0 {
		what := "in progress"
		if *failed {
			what = "failed"
		}
		fmt.Fprintf(stdout, "no analyses %s\n", what)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKFLOW\tFILE\tSTATUS\tSTEP\tSEGMENTS\tFAILED\tUPDATED\tERROR")
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%d\t%s\t%s\n", p.WorkflowID, p.FileName, p.Status, currentStep(p),
			segmentsFinished(p), p.TotalSegments, p.SegmentsFailed, p.UpdatedAt, p.Error)
	}
	return tw.Flush()
}

// workflowDetail is `status WORKFLOW --json`.
type workflowDetail struct {
	Workflow    pipeline.Workflow     `json:"workflow"`
	Progress    pipeline.StepProgress `json:"progress"`
	Steps       []namedStep           `json:"steps"`
	Transitions []pipeline.Transition `json:"transitions"`
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
	d := workflowDetail{Workflow: wf, Progress: prog, Transitions: trs}
	for _, name := range pipeline.DefaultDefinition().StepNames() {
		if st, ok := prog.Steps[name]; ok {
			d.Steps = append(d.Steps, namedStep{Name: name, StepState: st})
		}
	}
	return d, nil
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
	fmt.Fprintln(tw, "STEP\tSTATUS\tSTARTED\tENDED\tNOTE")
	for _, s := range d.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Status, s.StartedAt, s.EndedAt, s.Error)
	}
	return tw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
