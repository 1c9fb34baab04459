package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/localrun"
	"github.com/docpipe/docpipe/internal/cpus"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/metered"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
	"github.com/docpipe/docpipe/pipeline/web"
	"github.com/docpipe/docpipe/statemachine/embedded"
	"github.com/docpipe/docpipe/statemachine/interp"
)

// runFlags are the options of the commands that process documents here
// (run, ingest, rerun, work), on top of the global flags.
type runFlags struct {
	*app
	concurrency int
	pdf         string
	progress    string
	verbose     bool
	cost        bool
	prices      string       // --prices: a price file over the list prices of AI models
	notify      *notifyFlags // where outcome events go
	pipeline    string       // NAME[@VERSION] or a pipeline file new documents run; "" the project's default
	noCache     bool         // new workflows neither reuse stage outputs nor offer their own
	web         *webFlags    // run and ingest: how URLs are fetched
	pageImages  string       // "png": store every PDF page as an image
	// allowPrivate lets URLs and webhooks reach addresses that are not public.
	allowPrivate bool
}

// concurrencyHelp says how --concurrency counts documents: by their size,
// on the scheduler every local command runs its documents on.
var concurrencyHelp = fmt.Sprintf("documents processed at once on this machine (a file of up to %d KiB counts as 1/%d of one, a larger one in proportion up to 1 MiB)",
	(localrun.SmallDocBytes+512)>>10, localrun.SlotShares)

func newRunFlags(a *app, fs *pflag.FlagSet) *runFlags {
	f := &runFlags{app: a}
	fs.IntVar(&f.concurrency, "concurrency", max(2, cpus.Usable()), concurrencyHelp)
	fs.StringVar(&f.pdf, "pdf", envOr(backend.EnvPDFBackend, "auto"), "PDF text backend: auto (poppler when installed), poppler or go [$"+backend.EnvPDFBackend+"]")
	fs.StringVar(&f.progress, "progress", "auto", "progress display: auto (bars on a terminal), bars, log or none")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "log every step")
	fs.BoolVar(&f.cost, "cost", false, "print per-page request counts (state transitions, table and blob requests) as they would be billed on AWS, and AI tokens with their estimated price")
	fs.StringVar(&f.prices, "prices", "", "with --cost: a JSON price file per AI model id ({\"models\": {\"ID\": {\"input_per_1k\": x, \"output_per_1k\": y}}}) over the built-in list prices")
	f.notify = addNotifyFlags(fs)
	fs.BoolVar(&f.allowPrivate, "allow-private-network", false, "URLs and webhooks: allow addresses that are not public (loopback, private, link-local, reserved)")
	fs.StringVar(&f.pageImages, "page-images", "", "store every PDF page as an image beside its segment: png (needs pdftoppm)")
	fs.StringVar(&f.pipeline, "pipeline", "", "pipeline new documents run: NAME, NAME@VERSION or a pipeline FILE, applied first (default: the project's, else the built-in one)")
	fs.BoolVar(&f.noCache, "no-cache", false, "run every stage of new workflows, reusing no earlier output (and offering none)")
	return f
}

// docResult is one line of the final report.
type docResult struct {
	File            string   `json:"file"`
	WorkflowID      string   `json:"workflow_id"`
	Status          string   `json:"status"`
	Segments        int      `json:"segments"`
	FailedSegments  int      `json:"failed_segments"`
	SkippedSegments int      `json:"skipped_segments"`
	SkippedReasons  []string `json:"skipped_reasons,omitempty"` // one per distinct reason
	Seconds         float64  `json:"seconds"`
	Error           string   `json:"error"`
	Reused          bool     `json:"reused,omitempty"`
}

// succeeded is the one rule for a document's success: it completed and no
// segment failed. A partial result is no success, so that a script can
// tell it from a full one.
func (r docResult) succeeded() bool {
	return r.Status == string(pipeline.WorkflowCompleted) && r.FailedSegments == 0
}

func init() { addCommand(newRunCmd) }

func newRunCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [flags] FILE|DIR...",
		Short: "Process documents on this machine and wait for them",
		Long: `Process documents on this machine (state under --home) with live progress,
then print one line per document. Folders are walked; files that cannot be
read as documents (pipes, sockets, devices, unreadable files, broken links)
are listed as "not processed". A second run of the same content reports the
earlier result without processing it again.

Exit status 0 when every document completed with no failed segment; 1 when
any document failed, completed with failed segments or was not processed;
3 when none failed but some wait for a review (docpipe review list; docpipe
work goes on once decided); 2 for a command line docpipe cannot parse.`,
		Example: `  docpipe run samples/docs
  docpipe run --json report.pdf notes.md
  docpipe run --pipeline ./pipeline.yaml samples/docs   # apply the file, then run on it
  docpipe run samples/docs --home /tmp/dp --pdf go --cost`,
		Args: minArgs(1, "at least one FILE or DIR"),
	}
	f := newRunFlags(a, cmd.Flags())
	f.web = addWebFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := a.localOnly(cmd); err != nil {
			return err
		}
		return runDocuments(cmd.Context(), f, args)
	}
	return cmd
}

func runDocuments(ctx context.Context, f *runFlags, args []string) error {
	stdout, stderr := f.stdout, f.stderr
	files, skipped, err := collectSources(args)
	if err != nil {
		return err
	}
	if len(files)+len(skipped) == 0 {
		return fmt.Errorf("no files found in %v", args)
	}
	prices := ai.ListPrices()
	if f.prices != "" {
		if prices, err = ai.LoadPrices(f.prices); err != nil {
			return err
		}
	}
	var results []docResult
	var lp *localPipeline
	if len(files) > 0 {
		lp, err = openLocalPipeline(ctx, f, stderr)
		if err != nil {
			return err
		}
		defer lp.Close()
		stopRelay, err := lp.lockAndRelay(ctx, f)
		if err != nil {
			return err
		}
		defer stopRelay()
		results, err = lp.process(ctx, files, f.progress, stderr)
		if err != nil {
			return err
		}
	}
	for _, s := range skipped {
		results = append(results, docResult{File: s.Path, Status: statusNotProcessed, Error: s.Reason})
	}
	if err := report(stdout, results, f.jsonOut); err != nil {
		return err
	}
	if f.cost && lp != nil {
		if err := lp.reportCost(ctx, stderr, results, prices, f.prices != ""); err != nil {
			return err
		}
	}
	failed, waiting := false, false
	for _, r := range results {
		switch r.Status {
		case string(pipeline.WorkflowCompleted):
			if !r.succeeded() {
				failed = true
				fmt.Fprintf(stderr, "%s %s; %s\n", printable(r.File), statusText(r), failureAdvice(f.home, r.WorkflowID, r.Error))
			}
		case string(pipeline.WorkflowWaitingReview):
			waiting = true
			fmt.Fprintf(stderr, "%s waiting for review (docpipe review list --home %s)\n", printable(r.File), f.home)
		case statusNotProcessed:
			failed = true
			fmt.Fprintf(stderr, "skipped %s: %s\n", printable(r.File), printable(r.Error))
		default:
			failed = true
			fmt.Fprintf(stderr, "%s failed; %s\n", printable(r.File), failureAdvice(f.home, r.WorkflowID, r.Error))
		}
	}
	switch {
	case failed:
		return exitError{1}
	case waiting:
		return exitError{exitWaitingReview}
	}
	return nil
}

// exitWaitingReview is run's exit status when nothing failed but some
// documents are parked on a review: not finished, yet not failed either.
const exitWaitingReview = 3

// localPipeline is the embedded default wired together: the drivers and
// the engine this command chose, and the runtime's options on them.
type localPipeline struct {
	backend     *backend.Backend
	logger      *slog.Logger
	meter       *metered.Meter
	transitions atomic.Int64 // states entered, in every execution
	options     localrun.Options
}

func openLocalPipeline(ctx context.Context, f *runFlags, stderr io.Writer) (*localPipeline, error) {
	b, err := backend.OpenLocal(f.home)
	if err != nil {
		return nil, err
	}
	lp := &localPipeline{backend: b}
	if f.cost {
		lp.meter = &metered.Meter{}
		b.Meter(lp.meter) // before anything below takes b.Repo
	}
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	recorder := pipeline.BatchRecorder(b.Repo)
	reg, err := backend.Registry(b, backend.StepOptions{PDFBackend: f.pdf, PageImages: f.pageImages, Logger: logger, PipelineDir: os.Getenv(backend.EnvPipelineDir), Recorder: recorder})
	if err != nil {
		b.Close()
		return nil, err
	}
	eng, err := embedded.New(reg, b.Blobs, embedded.Options{Recorder: recorder, OnEvent: func(e interp.Event) {
		if e.Type == interp.StateEntered {
			lp.transitions.Add(1)
		}
	}})
	if err != nil {
		b.Close()
		return nil, err
	}
	ig := &pipeline.Ingester{Repo: b.Repo, Blobs: b.Blobs, Definition: pipelinefile.Default(), Bucket: b.Bucket}
	if err := ig.EnsureProject(ctx, f.project, f.project); err != nil {
		b.Close()
		return nil, err
	}
	ref, err := pipelineRef(ctx, f.app, b, f.pipeline)
	if err != nil {
		b.Close()
		return nil, err
	}
	chosen, err := choosePipeline(ctx, b.Repo, f.project, ref)
	if err != nil {
		b.Close()
		return nil, err
	}
	ig.Definition = chosen.def
	w := f.web
	if w == nil {
		w = &webFlags{}
	}
	lp.logger = logger
	lp.options = localrun.Options{
		Ingester: ig, Engine: eng, Recorder: recorder, Project: f.project,
		Pipeline:    localrun.Pipeline{Name: chosen.name, Version: chosen.version},
		NoCache:     f.noCache,
		Concurrency: f.concurrency, Logger: logger,
		Fetch: web.FetcherOptions{UserAgent: web.UserAgent(buildVersion()), AllowPrivateNetwork: f.allowPrivate},
		Crawl: web.Limits{Depth: w.depth, MaxPages: w.maxPages, MaxBytes: w.maxBytes, Timeout: w.timeout},
		LeftOut: func(source string, s web.Skip) {
			fmt.Fprintf(f.stderr, "%s: left out %s: %s\n", source, s.URL, s.Reason)
		},
	}
	return lp, nil
}

// runtime is the local runtime on lp's drivers; observer, when set, hears
// which workflows run.
func (lp *localPipeline) runtime(observer localrun.Observer) *localrun.Runtime {
	o := lp.options
	o.Observer = observer
	return localrun.New(o)
}

// reportCost prints what the run's requests would be on AWS, per segment
// (a segment is a page of a PDF), and the tokens its AI stages billed with
// their price per 1,000 pages.
func (lp *localPipeline) reportCost(ctx context.Context, w io.Writer, results []docResult, prices ai.Prices, ownPrices bool) error {
	pages := 0
	for _, r := range results {
		if !r.Reused {
			pages += r.Segments
		}
	}
	c := lp.meter.Counts() // before the reads below
	per := func(n int64) float64 {
		if pages == 0 {
			return 0
		}
		return float64(n) / float64(pages)
	}
	fmt.Fprintf(w, "cost: %d segments processed; per segment: %.3f state transitions, %.3f table writes, %.3f table reads, %.3f blob PUTs, %.3f blob reads\n",
		pages, per(lp.transitions.Load()), per(c.TableWrites), per(c.TableReads), per(c.BlobPuts), per(c.BlobReads))

	usage := map[string]ai.Usage{}
	for _, r := range results {
		if r.Reused || r.WorkflowID == "" {
			continue
		}
		prog, err := lp.backend.Repo.GetProgress(ctx, r.WorkflowID)
		if err != nil {
			return err
		}
		def, err := lp.backend.Repo.Definition(ctx, prog.Pipeline, prog.PipelineVersion)
		if err != nil {
			return err
		}
		ref := pipeline.WorkflowRef{ProjectID: prog.ProjectID, DocumentID: prog.DocumentID, WorkflowID: prog.WorkflowID}
		u, err := stageoutput.AIUsage(ctx, lp.backend.Blobs, ref, def)
		if err != nil {
			return fmt.Errorf("AI usage of %s: %w", r.WorkflowID, err)
		}
		for model, n := range u {
			usage[model] = usage[model].Add(n)
		}
	}
	if len(usage) == 0 {
		return nil
	}
	var total ai.Usage
	for _, u := range usage {
		total = total.Add(u)
	}
	dollars, unpriced := prices.Cost(usage)
	source := "list prices as of 2026, override with --prices FILE"
	if ownPrices {
		source = "prices from --prices over the list prices"
	}
	fmt.Fprintf(w, "cost: AI tokens %d input, %d output; per segment %.1f input, %.1f output; estimated $%.2f per 1,000 pages (%s)\n",
		total.InputTokens, total.OutputTokens, per(total.InputTokens), per(total.OutputTokens), dollars/float64(max(pages, 1))*1000, source)
	if len(unpriced) > 0 {
		fmt.Fprintf(w, "cost: no price for %s: their tokens are left out of the estimate (give them with --prices FILE)\n", strings.Join(unpriced, ", "))
	}
	return nil
}

func (lp *localPipeline) Close() error { return lp.backend.Close() }

// lockAndRelay takes the home for a command that runs workflows (one at a
// time per home) and delivers outcome events while it runs; stop ends
// the delivery.
func (lp *localPipeline) lockAndRelay(ctx context.Context, f *runFlags) (stop func(), err error) {
	if err := lp.backend.LockHome(); err != nil {
		return nil, err
	}
	return startRelay(ctx, lp.backend, f.notify, f.allowPrivate, lp.logger)
}

// process registers and runs files on the runtime, with progress shown
// as mode says, and returns one result per file.
func (lp *localPipeline) process(ctx context.Context, files []string, mode string, stderr io.Writer) ([]docResult, error) {
	display := newProgress(stderr, mode, lp.backend.Repo)
	defer display.Stop()
	outcomes, err := lp.runtime(display).Process(ctx, files)
	if err != nil {
		return nil, err
	}
	display.Stop()
	results := make([]docResult, len(outcomes))
	for i, o := range outcomes {
		r, err := lp.result(ctx, o)
		if err != nil {
			return nil, err
		}
		results[i] = r
	}
	return results, nil
}

// result reads a workflow's outcome back from the table: the report shows
// what is recorded, not what this process believes.
func (lp *localPipeline) result(ctx context.Context, o *localrun.Outcome) (docResult, error) {
	if o.NotProcessed != "" {
		return docResult{File: o.File, Status: statusNotProcessed, Error: o.NotProcessed}, nil
	}
	ref := o.Registration.Ref()
	prog, err := lp.backend.Repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		return docResult{}, err
	}
	r := docResult{
		File: o.File, WorkflowID: ref.WorkflowID, Status: string(prog.Status),
		Segments: prog.TotalSegments, FailedSegments: prog.SegmentsFailed, SkippedSegments: prog.SegmentsSkipped,
		Error: prog.Error, Reused: o.Start.IsZero(),
	}
	if prog.SegmentsSkipped > 0 {
		if r.SkippedReasons, err = skipReasons(ctx, lp.backend.Repo, ref.WorkflowID); err != nil {
			return docResult{}, err
		}
	}
	if !o.Start.IsZero() && !o.End.IsZero() {
		r.Seconds = o.End.Sub(o.Start).Seconds()
	}
	if r.Status != string(pipeline.WorkflowCompleted) && r.Status != string(pipeline.WorkflowFailed) &&
		r.Status != string(pipeline.WorkflowWaitingReview) {
		// The engine returned without a final status, and no review holds
		// the workflow: never report that as success.
		r.Status = string(pipeline.WorkflowFailed)
		if r.Error == "" {
			r.Error = "execution ended while the workflow was " + string(prog.Status)
			if o.Err != nil {
				r.Error += ": " + o.Err.Error()
			}
		}
	}
	return r, nil
}

func report(w io.Writer, results []docResult, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range results {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	t := newTextTable(w, "FILE", "WORKFLOW", "STATUS", "SEGMENTS", "FAILED", "SECONDS", "ERROR")
	for _, r := range results {
		secs := fmt.Sprintf("%.2f", r.Seconds)
		if r.Reused {
			secs = "(earlier)"
		}
		t.row(r.File, r.WorkflowID, statusText(r), r.Segments, r.FailedSegments, secs, r.Error)
	}
	return t.flush()
}

// statusText is the status column: the workflow status, and for a
// completed one how many segments failed, then how many were skipped and
// why, so that a document with pages nobody read never passes for fully
// analysed.
func statusText(r docResult) string {
	s := r.Status
	if r.Status == string(pipeline.WorkflowCompleted) && r.FailedSegments > 0 {
		s += fmt.Sprintf(", %s failed", pipeline.SegmentCount(r.FailedSegments))
	}
	if r.SkippedSegments > 0 {
		s += fmt.Sprintf(", %s skipped", pipeline.SegmentCount(r.SkippedSegments))
		if len(r.SkippedReasons) > 0 {
			s += ": " + strings.Join(r.SkippedReasons, "; ")
		}
	}
	return s
}

// skipReasons lists the distinct reasons a workflow's segments were
// skipped for, in segment order.
func skipReasons(ctx context.Context, repo *pipeline.Repository, workflowID string) ([]string, error) {
	var reasons []string
	err := repo.EachSegment(ctx, workflowID, func(s pipeline.Segment) error {
		if s.Status != pipeline.SegmentSkipped {
			return nil
		}
		reason := s.Error
		if _, after, ok := strings.Cut(reason, "skipped: "); ok {
			reason = after // "OCR skipped: tesseract is …" reads "tesseract is …" after "skipped:"
		}
		if reason == "" {
			reason = "no reason recorded"
		}
		if !slices.Contains(reasons, reason) {
			reasons = append(reasons, reason)
		}
		return nil
	})
	return reasons, err
}
