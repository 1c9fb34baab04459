package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/docpipe/docpipe/cmd/internal/localrun"
	"github.com/docpipe/docpipe/cmd/internal/pipelineroute"
	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

func init() { addCommand(newBackfillCmd) }

// backfillFlags are backfill's own options, beside the run flags.
type backfillFlags struct {
	status string
	since  string
	dryRun bool
}

func newBackfillCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backfill --pipeline NAME@VERSION [flags]",
		Short: "Move a project's documents onto a pipeline version, reusing unchanged stage outputs",
		Long: `Start a new workflow on NAME@VERSION for every document of the project
whose latest workflow on pipeline NAME is on another version (and matches
--status and --since). Each new workflow supersedes the old one, and the
link is kept both ways. Stages whose definition and inputs did not change
reuse the earlier output instead of running (the stage cache; --no-cache
runs everything). --dry-run prints, per document, which stages would run
and which be reused. A backfill that was stopped (even killed) goes on
where it was when run again, or with docpipe work: nothing runs twice.
Workflows start through the project's admission limit, like any other.`,
		Example: `  docpipe backfill --pipeline invoices@3 --dry-run
  docpipe backfill --project acme --pipeline invoices@3 --status failed
  docpipe backfill --pipeline invoices@3 --since 2026-01-01 --no-cache`,
		Args: exactArgs(0, "no arguments"),
	}
	f := newRunFlags(a, cmd.Flags())
	var b backfillFlags
	cmd.Flags().StringVar(&b.status, "status", "all", "documents whose latest workflow is: completed, failed or all")
	cmd.Flags().StringVar(&b.since, "since", "", "only documents whose latest workflow started at or after TIME (2026-01-02, RFC 3339, or a duration ago such as 72h)")
	cmd.Flags().BoolVar(&b.dryRun, "dry-run", false, "print what would run and what would be reused, per document, and start nothing")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if f.pipeline == "" {
			return usageErrorf("backfill needs --pipeline NAME@VERSION: the version to move the documents onto")
		}
		filter, err := b.filter(time.Now())
		if err != nil {
			return err
		}
		if a.onAWS() {
			return backfillOnAWS(cmd.Context(), f, b, filter)
		}
		return backfillLocal(cmd.Context(), f, b, filter)
	}
	return cmd
}

// filter is the documents' filter the flags ask for.
func (b backfillFlags) filter(now time.Time) (pipeline.BackfillFilter, error) {
	var f pipeline.BackfillFilter
	switch b.status {
	case "all", "":
	case "completed", "failed":
		f.Status = pipeline.WorkflowStatus(b.status)
	default:
		return f, usageErrorf("--status %q: want completed, failed or all", b.status)
	}
	if b.since == "" {
		return f, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, b.since, time.Local); err == nil {
			f.Since = t
			return f, nil
		}
	}
	if d, err := time.ParseDuration(b.since); err == nil && d > 0 {
		f.Since = now.Add(-d)
		return f, nil
	}
	return f, usageErrorf("--since %q: want a date (2026-01-02), a time (RFC 3339) or a duration ago (72h)", b.since)
}

// backfillLocal runs a backfill on the local home and waits for it.
func backfillLocal(ctx context.Context, f *runFlags, b backfillFlags, filter pipeline.BackfillFilter) error {
	stdout, stderr := f.stdout, f.stderr
	lp, err := openLocalPipeline(ctx, f, stderr)
	if err != nil {
		return err
	}
	defer lp.Close()
	stopRelay, err := lp.lockAndRelay(ctx, f)
	if err != nil {
		return err
	}
	defer stopRelay()
	repo := lp.backend.Repo
	target := lp.options.Pipeline
	def := lp.options.Ingester.Definition
	items, err := repo.PlanBackfill(ctx, f.project, target.Name, target.Version, filter)
	if err != nil {
		return err
	}
	if b.dryRun {
		return printForecast(ctx, stdout, repo, items, def, f.noCache)
	}
	if len(items) == 0 {
		fmt.Fprintf(stdout, "nothing to backfill: every document of %s on %s is there already (or matches no filter)\n", f.project, pipeline.PipelineKey(target.Name, target.Version))
		return nil
	}
	// A backfill killed midway left its workflows' slots taken: count
	// them afresh, as work does, before starting anything.
	if err := repo.RecountRunning(ctx, f.project); err != nil {
		return err
	}
	if err := repo.CreateBackfillWorkflows(ctx, items, target.Version, def.Stages, f.noCache); err != nil {
		return err
	}
	id := pipeline.NewID()
	started := time.Now()
	prog := newBackfillProgress(stderr, f.progress, len(items))
	rt := lp.runtime(nil)
	var mu sync.Mutex
	ends := make([]localrun.Ended, len(items))
	for i, it := range items {
		wf := *it.Target
		if err := rt.Start(ctx, localrun.Job{File: wf.FileName, Workflow: wf}, func(e localrun.Ended) {
			mu.Lock()
			ends[i] = e
			mu.Unlock()
			prog.ended(e.Err != nil)
		}); err != nil {
			return err
		}
	}
	rt.Wait()
	prog.stop()
	if err := ctx.Err(); err != nil {
		return err
	}
	return finishBackfill(ctx, f, repo, target.Name, target.Version, def, id, started, items, func(i int) float64 { return ends[i].End.Sub(ends[i].Start).Seconds() })
}

// finishBackfill ends a backfill whose workflows have all ended, locally
// or on AWS: it sums up what ran and what was reused, announces that in a
// backfill.completed event for the project's sinks, reports each document
// as run does, and returns run's exit status. took is how long item i's
// workflow ran.
func finishBackfill(ctx context.Context, f *runFlags, repo *pipeline.Repository, name string, version int, def pipeline.Definition, id string, started time.Time, items []pipeline.BackfillItem, took func(i int) float64) error {
	sum := pipeline.EventBackfill{ID: id, Documents: len(items), Seconds: time.Since(started).Seconds()}
	var results []docResult
	for i, it := range items {
		p, err := repo.GetProgress(ctx, it.Target.ID)
		if err != nil {
			return err
		}
		for _, st := range def.Stages {
			switch s := p.Steps[st.Name]; {
			case s.Reused():
				sum.StagesReused++
			case s.Status == pipeline.StepCompleted:
				sum.StagesRun++
			}
		}
		if p.Status == pipeline.WorkflowCompleted {
			sum.Completed++
		} else {
			sum.Failed++
		}
		results = append(results, docResult{
			File: it.Target.FileName, WorkflowID: it.Target.ID, Status: string(p.Status),
			Segments: p.TotalSegments, FailedSegments: p.SegmentsFailed, SkippedSegments: p.SegmentsSkipped, Error: p.Error,
			Seconds: took(i),
		})
	}
	if _, err := repo.AnnounceBackfill(ctx, f.project, name, version, sum); err != nil {
		return err
	}
	if err := report(f.stdout, results, f.jsonOut); err != nil {
		return err
	}
	fmt.Fprintf(f.stderr, "backfill %s onto %s: %d documents, %d completed, %d failed; %d stages run, %d reused\n",
		id, pipeline.PipelineKey(name, version), sum.Documents, sum.Completed, sum.Failed, sum.StagesRun, sum.StagesReused)
	// The exit status is run's: 1 when any document did not fully
	// succeed, a completed one with failed segments included.
	for _, r := range results {
		if !r.succeeded() {
			return exitError{1}
		}
	}
	return nil
}

// printForecast prints, per document, the stages a backfill would run and
// those it would reuse, and what the runs cost the last time: state
// transitions, and for AI stages the tokens they billed.
func printForecast(ctx context.Context, w io.Writer, repo *pipeline.Repository, items []pipeline.BackfillItem, def pipeline.Definition, noCache bool) error {
	if len(items) == 0 {
		fmt.Fprintln(w, "nothing to backfill")
		return nil
	}
	t := newTextTable(w, "DOCUMENT", "FROM", "RUN", "REUSE", "EST. TRANSITIONS")
	totalRun, totalReused, totalTransitions := 0, 0, 0
	for _, it := range items {
		prev := it.Previous
		prevDef, err := repo.Definition(ctx, prev.Pipeline, prev.PipelineVersion)
		if err != nil {
			return err
		}
		p, err := repo.GetProgress(ctx, prev.ID)
		if err != nil {
			return err
		}
		trs, err := repo.ListTransitions(ctx, prev.ID)
		if err != nil {
			return err
		}
		var run, reuse []string
		transitions := 0
		for _, fc := range pipeline.ForecastStages(prevDef, def, p, noCache) {
			if fc.Reused {
				reuse = append(reuse, fc.Stage)
				continue
			}
			run = append(run, fc.Stage)
			for _, tr := range trs {
				if tr.Step == fc.Stage {
					transitions++
				}
			}
		}
		totalRun += len(run)
		totalReused += len(reuse)
		totalTransitions += transitions
		from := pipeline.PipelineKey(prev.Pipeline, prev.PipelineVersion) + " " + prev.ID
		if it.Resumed {
			from += " (resumes " + it.Target.ID + ")"
		}
		t.row(printable(prev.FileName), from, strings.Join(run, ","), strings.Join(reuse, ","), fmt.Sprint(transitions))
	}
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d documents: %d stage runs, %d reused; about %d step transitions (what the runs took last time)\n", len(items), totalRun, totalReused, totalTransitions)
	return err
}

// backfillProgress shows how far a backfill is: documents done of all,
// failures, and the time left at the rate so far. On a terminal the line
// redraws in place; elsewhere it is logged at most once a second.
type backfillProgress struct {
	w        io.Writer
	mode     string
	total    int
	started  time.Time
	mu       sync.Mutex
	done     int
	failed   int
	lastLine time.Time
}

func newBackfillProgress(w io.Writer, mode string, total int) *backfillProgress {
	if mode == "auto" {
		mode = "log"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			mode = "bars"
		}
	}
	return &backfillProgress{w: w, mode: mode, total: total, started: time.Now()}
}

func (p *backfillProgress) ended(failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if failed {
		p.failed++
	}
	now := time.Now()
	if p.mode == "none" || p.mode == "log" && p.done < p.total && now.Sub(p.lastLine) < time.Second {
		return
	}
	p.lastLine = now
	line := fmt.Sprintf("backfill %d/%d documents, %d failed, %s", p.done, p.total, p.failed, etaText(now.Sub(p.started), p.done, p.total))
	if p.mode == "bars" {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *backfillProgress) stop() {
	if p.mode == "bars" {
		fmt.Fprintln(p.w)
	}
}

// etaText estimates the time left from the time done documents took.
func etaText(took time.Duration, done, total int) string {
	if done >= total {
		return "done in " + took.Round(time.Second).String()
	}
	left := time.Duration(float64(took) / float64(done) * float64(total-done))
	return "about " + left.Round(time.Second).String() + " left"
}

// backfillOnAWS creates the backfill's workflows in the deployment's table
// and starts each on its version's state machine through the project's
// admission, as an upload is started: a workflow over the project's limit
// waits pending, and the reconciler starts it when a slot frees. It then
// watches the workflows until all have ended, with the progress and time
// left that a local backfill shows, and ends as a local backfill does
// (finishBackfill). Stopped while it watches, it leaves the executions
// running; a backfill run again watches them.
func backfillOnAWS(ctx context.Context, f *runFlags, b backfillFlags, filter pipeline.BackfillFilter) error {
	a := awsIngest{app: f.app, pipeline: f.pipeline}
	bk, clients, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer bk.Close()
	ref, err := pipelineRef(ctx, a.app, bk, a.pipeline)
	if err != nil {
		return err
	}
	chosen, err := choosePipeline(ctx, bk.Repo, a.project, ref)
	if err != nil {
		return err
	}
	items, err := bk.Repo.PlanBackfill(ctx, a.project, chosen.name, chosen.version, filter)
	if err != nil {
		return err
	}
	if b.dryRun {
		return printForecast(ctx, a.stdout, bk.Repo, items, chosen.def, f.noCache)
	}
	if len(items) == 0 {
		fmt.Fprintf(a.stdout, "nothing to backfill: every document of %s on %s is there already (or matches no filter)\n", a.project, chosen)
		return nil
	}
	machine, err := pipelineroute.StateMachine(ctx, bk.Repo, a.stateMachine, chosen.name, chosen.version)
	if err != nil {
		return err
	}
	if err := bk.Repo.CreateBackfillWorkflows(ctx, items, chosen.version, chosen.def.Stages, f.noCache); err != nil {
		return err
	}
	in := s3ingest.Ingest{
		Ingester: &pipeline.Ingester{Repo: bk.Repo, Blobs: bk.Blobs, Definition: chosen.def, Bucket: bk.Bucket},
		Executor: &sfn.Executor{API: clients.SFN, StateMachineARN: machine, Repo: bk.Repo},
		Project:  a.project, Pipeline: chosen.name, PipelineVersion: chosen.version,
	}
	id := pipeline.NewID()
	started := time.Now()
	held := 0
	for _, it := range items {
		res, err := in.Start(ctx, pipeline.Registration{Workflow: *it.Target})
		if err != nil {
			return fmt.Errorf("%s: %w", it.Target.FileName, err)
		}
		if res.Held {
			held++
		}
	}
	fmt.Fprintf(a.stderr, "backfill %s onto %s: %d documents started, %d held (pending: the project is at its limit); waiting for them to end (stopping this leaves them running)\n", id, chosen, len(items)-held, held)
	prog := newBackfillProgress(a.stderr, f.progress, len(items))
	took, err := watchBackfill(ctx, bk.Repo, items, prog, backfillPoll)
	prog.stop()
	if err != nil {
		return err
	}
	return finishBackfill(ctx, f, bk.Repo, chosen.name, chosen.version, chosen.def, id, started, items, func(i int) float64 { return took[i].Seconds() })
}

// backfillPoll is how often an AWS backfill looks at its workflows, and
// backfillPollBatch how many unfinished ones it reads a look: a large
// backfill is read a slice at a time, round the list.
const (
	backfillPoll      = 2 * time.Second
	backfillPollBatch = 100
)

// watchBackfill waits until every item's workflow has ended (or waits for
// a review), telling prog of each, and returns how long each ran.
func watchBackfill(ctx context.Context, repo *pipeline.Repository, items []pipeline.BackfillItem, prog *backfillProgress, every time.Duration) ([]time.Duration, error) {
	took := make([]time.Duration, len(items))
	open := make([]int, len(items))
	for i := range items {
		open[i] = i
	}
	for len(open) > 0 {
		n := min(len(open), backfillPollBatch)
		var still []int
		for _, i := range open[:n] {
			p, err := repo.GetProgress(ctx, items[i].Target.ID)
			if err != nil {
				return nil, err
			}
			if !p.Status.Final() && p.Status != pipeline.WorkflowWaitingReview {
				still = append(still, i)
				continue
			}
			took[i] = ranFor(p)
			prog.ended(p.Status != pipeline.WorkflowCompleted)
		}
		// Those not looked at this time come first the next.
		open = append(slices.Clone(open[n:]), still...)
		if len(open) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
	}
	return took, nil
}

// ranFor is how long a workflow that ended ran: from its first step's
// start to its last update.
func ranFor(p pipeline.StepProgress) time.Duration {
	end, err := time.Parse(time.RFC3339Nano, p.UpdatedAt)
	if err != nil {
		return 0
	}
	first := end
	for _, s := range p.Steps {
		if t, err := time.Parse(time.RFC3339Nano, s.StartedAt); err == nil && t.Before(first) {
			first = t
		}
	}
	return end.Sub(first)
}
