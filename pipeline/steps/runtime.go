// Package steps holds docpipe's step handlers. Every handler is invoked
// JSON-in/JSON-out through pipeline.Handler, the same way on a Lambda, in an
// activity worker and in the embedded engine, and every one records its
// status transitions in the table itself, so the table tells the same story
// whichever engine drives the pipeline.
package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/docpipe/docpipe/internal/cpus"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/ocr"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/stagerun"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/pipeline/transcribe"
)

// Deps is what the handlers need. cmd/* choose the drivers behind it.
type Deps struct {
	Repo  *pipeline.Repository
	Blobs blob.Store
	// Pipelines finds the pipeline version each workflow runs; nil serves
	// only docpipe's built-in pipeline.
	Pipelines pipeline.Pipelines
	PDF       extract.PDFExtractor
	OCR       ocr.Engine // nil: OCR is unavailable and image pages are skipped
	// Transcriber turns audio spans into text; nil: audio segments are
	// skipped with the reason.
	Transcriber transcribe.Engine
	// AudioSpan is how much audio one segment holds (0: 30 s).
	AudioSpan time.Duration
	// PageImages, when "png", renders every PDF page to a PNG stored beside
	// its segment (and OCR reads that image).
	PageImages string
	Limits     extract.Limits
	// HTTPClient sends the requests of users' HTTP stages (nil: the
	// default client).
	HTTPClient *http.Client
	// Lambda invokes users' Lambda stages; nil where there is no Lambda
	// (the embedded engine), which fails such a stage permanently.
	Lambda stagerun.LambdaInvoker
	// TempDir holds downloaded sources while a step runs ("" = os.TempDir).
	TempDir string
	// Parallelism bounds the work one invocation does at once (segments
	// analysed, blobs written). 0 means one per usable processor.
	Parallelism int
	Logger      *slog.Logger
	// AIModels make the model of an analysis stage from its settings
	// (cmd/* choose the clients behind them); nil fails analysis stages.
	AIModels ai.Models
	// Recorder records when steps start and finish; nil records each on
	// its own (pipeline.DirectRecorder), as where every step runs in its
	// own invocation. The embedded engine gives the pipeline.BatchRecorder
	// it flushes.
	Recorder pipeline.StepRecorder
}

func (d Deps) parallelism() int {
	if d.Parallelism > 0 {
		return d.Parallelism
	}
	return cpus.Usable()
}

func (d Deps) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// stepFunc is the body of a step, run for a stage of the workflow's
// pipeline.
type stepFunc func(ctx context.Context, in pipeline.StepInput, p *workflowPipeline) (outcome, error)

// outcome is how a step body ended when it did not fail.
type outcome struct {
	status  pipeline.StepStatus // completed (default) or skipped
	message string              // a short message for logs
	doc     *pipeline.DocAttrs  // format_parser's findings
	// info is what the step learned about the workflow (its format, its
	// segment count), recorded with the step's completion.
	info *pipeline.WorkflowInfo
	// reusedFrom names the workflow whose output the step reused (the
	// stage cache) rather than running, and output the blob holding it,
	// for a document stage that points at it (StepState.Output).
	reusedFrom, output string
	// offers are the stage cache entries for what the step wrote,
	// recorded with its completion (StepChange.Offers).
	offers []pipeline.CachedOutput
	// note is what a completion records beside its status, when it has
	// to say that the step did not run (pipeline.OwnOutputNote).
	note string
}

// Register adds every builtin handler, the generic handlers of users'
// stages and the bookkeeping steps to reg. Builtins are registered under
// their own names; a stage that runs one under another name is routed by
// the payload's "handler".
func Register(reg *pipeline.Registry, d Deps) {
	src := d.Pipelines
	if src == nil {
		src = pipeline.NewStaticPipelines(pipelinefile.Default())
	}
	if d.Recorder == nil {
		d.Recorder = pipeline.DirectRecorder(d.Repo)
	}
	h := &handlers{Deps: d, pipes: &pipelineCache{src: src, m: map[string]*workflowPipeline{}}, kinds: map[string]segmentKind{}}
	reg.Register(pipeline.StepSegmentPrep, h.wrap(pipeline.StepSegmentPrep, h.segmentPrep))
	reg.Register(pipeline.StepFormatParser, h.wrap(pipeline.StepFormatParser, h.formatParser))
	reg.Register(pipeline.StepOCR, h.wrap(pipeline.StepOCR, h.withPageImages(h.ocr)))
	reg.Register(pipeline.StepSegmentBuilder, h.wrap(pipeline.StepSegmentBuilder, h.segmentBuilder))
	reg.Register(pipeline.StepGraphBuilder, h.wrap(pipeline.StepGraphBuilder, h.cachedResult(pipeline.GraphBlobKey, h.graphBuilder)))
	reg.Register(pipeline.StepDocumentSummarizer, h.wrap(pipeline.StepDocumentSummarizer, h.cachedResult(pipeline.SummaryBlobKey, h.documentSummarizer)))
	// Every segment stage kind runs through the one segment runner.
	h.kinds[pipeline.StepSegmentAnalyzer] = analyzerKind{}
	reg.Register(pipeline.StepSegmentAnalyzer, h.batch(pipeline.StepSegmentAnalyzer, h.segmentStage(analyzerKind{})))
	for _, name := range []string{pipeline.HandlerCommand, pipeline.HandlerHTTP, pipeline.HandlerLambda} {
		h.kinds[name] = userKind{}
		reg.Register(name, h.userStage(name))
	}
	for _, name := range pipeline.AIBuiltins {
		h.kinds[name] = aiKind{}
		reg.Register(name, h.aiStage(name))
	}
	reg.Register(pipeline.HandlerReview, h.reviewStage())
	reg.Register(pipeline.StepFinalize, pipeline.HandlerFunc(h.finalize))
	reg.Register(pipeline.StepWorkflowFailed, pipeline.HandlerFunc(h.workflowFailed))
}

type handlers struct {
	Deps
	pipes *pipelineCache
	// kinds are the segment stage kinds by handler name.
	kinds map[string]segmentKind
}

func decodeInput(payload []byte) (pipeline.StepInput, error) {
	var in pipeline.StepInput
	if err := json.Unmarshal(payload, &in); err != nil {
		return in, &steperr.InvalidInputError{Reason: fmt.Sprintf("payload is not a step input: %v", err)}
	}
	w := in.Workflow
	if w.ProjectID == "" || w.DocumentID == "" || w.WorkflowID == "" {
		return in, &steperr.InvalidInputError{Reason: "payload lacks workflow ids"}
	}
	return in, nil
}

func encodeOutput(out pipeline.StepOutput) ([]byte, error) { return json.Marshal(out) }

// wrap turns a document-scope step body into a Handler that records the
// stage's transitions under the stage's name (the payload's step):
// pending|failed → in_progress → completed|skipped|failed, or straight to
// skipped when its `when` did not match. A stage already completed by an
// earlier attempt (a resumed run, a redelivered task) is not run again.
func (h *handlers) wrap(handler string, body stepFunc) pipeline.Handler {
	return pipeline.HandlerFunc(func(ctx context.Context, payload []byte) ([]byte, error) {
		in, err := decodeInput(payload)
		if err != nil {
			return nil, err
		}
		// The flushes below make durable what this invocation wrote.
		ctx = blob.WithWriteMark(ctx)
		step := in.Step
		ctx, pipe, out, err := h.begin(ctx, in, handler)
		if err != nil || out != nil {
			return out, err
		}
		started := time.Now()
		res, runErr := safeRun(ctx, in, pipe, body)
		if runErr != nil {
			h.logger().Info("step failed", "step", step, "workflow", in.Workflow.WorkflowID, "error", runErr)
			why := runErr.Error()
			if ctx.Err() != nil {
				// Stopped from outside (a stage beside it failed, its task
				// timed out, the run was aborted): that is the reason, not
				// whatever the stop broke on its way.
				why = "stopped: " + context.Cause(ctx).Error()
			}
			failed := pipeline.StepChange{Step: step, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepFailed, Error: why}
			if err := h.Recorder.Finish(context.WithoutCancel(ctx), in.Workflow, failed); err != nil {
				h.logger().Error("record step failure", "step", step, "error", err)
			}
			return nil, runErr
		}
		to := res.status
		if to == "" {
			to = pipeline.StepCompleted
		}
		note := res.note // a skip records its reason, a completion only why it did not run
		if to == pipeline.StepSkipped {
			note = res.message
		}
		if err := h.flushBlobs(ctx); err != nil {
			return nil, err
		}
		end := pipeline.StepChange{Step: step, Seen: pipeline.StepInProgress, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: to, Error: note, Info: res.info, ReusedFrom: res.reusedFrom, Output: res.output, Offers: res.offers}
		if err := h.Recorder.Finish(ctx, in.Workflow, end); err != nil {
			return nil, storageErr("finish step", err)
		}
		h.logger().Debug("step done", "step", step, "workflow", in.Workflow.WorkflowID, "took", time.Since(started), "message", res.message)
		return encodeOutput(pipeline.StepOutput{Step: step, Message: res.message, Doc: res.doc})
	})
}

// begin decides from the step item whether a document step runs, and
// starts it: out is the step's answer when it does not run (done by an
// earlier attempt, skipped by its `when`), else pipe is the workflow's
// pipeline and the step is in progress. The segment stages this step waits
// for close, and the step starts, in one write (with what the step before
// left to record, on the embedded engine).
func (h *handlers) begin(ctx context.Context, in pipeline.StepInput, handler string) (_ context.Context, pipe *workflowPipeline, out []byte, err error) {
	step := in.Step
	var st pipeline.Stage
	prog, err := h.start(ctx, in.Workflow, "start step", func(prog *pipeline.StepProgress) (pipeline.StepStart, error) {
		pipe, out = nil, nil
		p, err := h.pipelineOf(ctx, *prog)
		if err != nil {
			return pipeline.StepStart{}, err
		}
		if st, err = p.stage(step, handler); err != nil {
			return pipeline.StepStart{}, err
		}
		if done(prog.Steps[step].Status) {
			o := pipeline.StepOutput{Step: step, Skipped: true, Message: "already " + string(prog.Steps[step].Status)}
			if handler == pipeline.StepFormatParser {
				// The state machine keeps what format_parser returns for
				// the `when` conditions, also on a resumed run.
				if o.Doc, err = h.docAttrs(ctx, in.Workflow); err != nil {
					return pipeline.StepStart{}, err
				}
			}
			out, err = encodeOutput(o)
			return pipeline.StepStart{}, err
		}
		if prog.Status.Final() {
			return pipeline.StepStart{}, &steperr.InvalidInputError{Reason: fmt.Sprintf("workflow is already %s", prog.Status)}
		}
		if prog.Status == pipeline.WorkflowPending {
			if _, err := h.Repo.SetWorkflowStatus(ctx, in.Workflow, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, "", pipeline.StatusSeen(*prog)); err != nil {
				return pipeline.StepStart{}, storageErr("mark workflow in progress", err)
			}
			prog.Status = pipeline.WorkflowInProgress
		}
		pipe = p
		changes, err := h.stageChanges(ctx, in.Workflow, step, *prog, p)
		if err != nil {
			return pipeline.StepStart{}, err
		}
		if !in.Skip {
			changes = append(changes, pipeline.StepChange{Step: step, Seen: prog.Steps[step].Status, From: []pipeline.StepStatus{pipeline.StepPending, pipeline.StepFailed}, To: pipeline.StepInProgress})
		}
		return pipeline.StepStart{Steps: changes}, nil
	})
	switch {
	case err != nil:
		return ctx, nil, nil, err
	case out != nil:
		return ctx, nil, out, nil
	case in.Skip:
		b, err := h.skipStage(ctx, in, st)
		return ctx, nil, b, err
	}
	return cacheContext(ctx, prog), pipe, nil, nil
}

// start starts a step through the recorder. decide's own errors come back
// as they are; the recorder's are storage errors in doing what.
func (h *handlers) start(ctx context.Context, ref pipeline.WorkflowRef, what string, decide pipeline.StartFunc) (pipeline.StepProgress, error) {
	var own error
	prog, err := h.Recorder.Start(ctx, ref, func(p *pipeline.StepProgress) (pipeline.StepStart, error) {
		s, err := decide(p)
		own = err
		return s, err
	})
	switch {
	case own != nil:
		return prog, own
	case err != nil:
		return prog, storageErr(what, err)
	}
	return prog, nil
}

// batch wraps a segment-scope stage: many invocations share one step
// entry, so the first one moves it to in_progress and the next document
// step closes it (closeBatchStages) once the whole fan-out has finished.
func (h *handlers) batch(handler string, body stepFunc) pipeline.Handler {
	return pipeline.HandlerFunc(func(ctx context.Context, payload []byte) ([]byte, error) {
		in, err := decodeInput(payload)
		if err != nil {
			return nil, err
		}
		// The flushes below make durable what this invocation wrote.
		ctx = blob.WithWriteMark(ctx)
		step := in.Step
		if in.Batch == nil {
			return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("step %q needs a batch", step)}
		}
		// The first batch starts the stage; the others find it started.
		var (
			pipe *workflowPipeline
			st   pipeline.Stage
			out  []byte
		)
		prog, err := h.start(ctx, in.Workflow, "start step", func(prog *pipeline.StepProgress) (pipeline.StepStart, error) {
			out = nil
			p, err := h.pipelineOf(ctx, *prog)
			if err != nil {
				return pipeline.StepStart{}, err
			}
			if st, err = p.stage(step, handler); err != nil {
				return pipeline.StepStart{}, err
			}
			pipe = p
			switch {
			case in.Skip:
				return pipeline.StepStart{}, nil
			case done(prog.Steps[step].Status):
				// A resumed execution passing through a fan-out that a
				// later step already closed.
				out, err = encodeOutput(pipeline.StepOutput{Step: step, Skipped: true, Message: "already " + string(prog.Steps[step].Status)})
				return pipeline.StepStart{}, err
			}
			start := pipeline.StepChange{Step: step, Seen: prog.Steps[step].Status, From: []pipeline.StepStatus{pipeline.StepPending, pipeline.StepFailed}, To: pipeline.StepInProgress}
			return pipeline.StepStart{Steps: []pipeline.StepChange{start}}, nil
		})
		switch {
		case err != nil:
			return nil, err
		case in.Skip:
			return h.skipSegmentStage(ctx, in, st, pipe, prog)
		case out != nil:
			return out, nil
		}
		res, err := safeRun(cacheContext(ctx, prog), in, pipe, body)
		if err != nil {
			// The stage stays in progress for its other batches; the
			// audit trail keeps the attempt, which the state machine
			// may retry.
			msg := fmt.Sprintf("batch %d failed: %v", in.Batch.Batch, err)
			if rerr := h.Repo.RecordAttemptFailure(context.WithoutCancel(ctx), in.Workflow, step, msg); rerr != nil {
				h.logger().Error("record failed batch", "step", step, "error", rerr)
			}
			return nil, err
		}
		return encodeOutput(pipeline.StepOutput{Step: step, Message: res.message})
	})
}

// closeBatchStages completes the segment stages step waits for (reaching
// it means their fan-out has finished). The other steps write the same
// changes (stageChanges) with their own.
func (h *handlers) closeBatchStages(ctx context.Context, ref pipeline.WorkflowRef, step string, prog pipeline.StepProgress, pipe *workflowPipeline) error {
	// No flush: each segment's blobs were made durable before its outcome
	// was recorded (finishSegments), so the stage's blobs are durable
	// before it is recorded complete.
	changes, err := h.stageChanges(ctx, ref, step, prog, pipe)
	if err != nil {
		return err
	}
	if _, err := h.Repo.TransitionSteps(ctx, ref, changes...); err != nil {
		return storageErr("close segment stages", err)
	}
	return nil
}

// batchStageChanges are the changes that complete the segment stages step
// waits for, all of them for an empty step: reaching step means their
// fan-out has finished.
func batchStageChanges(step string, prog pipeline.StepProgress, pipe *workflowPipeline) []pipeline.StepChange {
	var before []string
	if step != "" {
		before = pipe.def.Ancestors(step)
	}
	// When every segment has ended failed, a stage that failed some of
	// them closes failed; the others, which answered theirs, completed.
	allFailed := prog.EverySegmentFailed()
	var changes []pipeline.StepChange
	for _, st := range pipe.def.Stages {
		if st.Scope != pipeline.ScopeSegment || done(prog.Steps[st.Name].Status) {
			continue
		}
		if step != "" && !slices.Contains(before, st.Name) {
			continue
		}
		s := prog.Steps[st.Name]
		c := pipeline.StepChange{
			Step: st.Name, Seen: s.Status, To: pipeline.StepCompleted,
			From:  []pipeline.StepStatus{pipeline.StepPending, pipeline.StepInProgress, pipeline.StepFailed},
			Error: segmentStageSummary(prog, st.Name),
		}
		if allFailed && s.SegmentsFailed > 0 {
			c.To = pipeline.StepFailed
		}
		if s.SegmentsRun == 0 && s.SegmentsReused > 0 {
			c.ReusedFrom = s.ReusedFrom // every segment's answer came from the cache
		}
		changes = append(changes, c)
	}
	return changes
}

// segmentStageSummary is what a closing segment stage's step says: the
// workflow's segment counts, and how many of the failures were its own.
func segmentStageSummary(prog pipeline.StepProgress, stage string) string {
	msg := prog.SegmentCounts()
	if prog.SegmentsFailed > 0 {
		msg += fmt.Sprintf("; %d failed in this stage", prog.Steps[stage].SegmentsFailed)
	}
	if n := prog.Steps[stage].SegmentsReused; n > 0 {
		msg += fmt.Sprintf("; %d reused", n)
	}
	if n := prog.Steps[stage].SegmentsOwn; n > 0 {
		msg += fmt.Sprintf("; %d reused from this workflow", n)
	}
	return msg
}

// flushBlobs makes the blobs written so far durable, before the table
// records that they exist: a step completed, a segment finished.
func (h *handlers) flushBlobs(ctx context.Context) error {
	if err := blob.Flush(ctx, h.Blobs); err != nil {
		return storageErr("flush blobs", err)
	}
	return nil
}

// finishSegments records segment outcomes once the blobs they name are
// durable.
func (h *handlers) finishSegments(ctx context.Context, workflowID string, fins []pipeline.SegmentFinish) (int, error) {
	return h.finishBatch(ctx, workflowID, fins, pipeline.BatchRecord{})
}

// finishBatch is finishSegments with what the batch records beside
// (pipeline.FinishBatch): its blobs are durable before any of it is.
func (h *handlers) finishBatch(ctx context.Context, workflowID string, fins []pipeline.SegmentFinish, rec pipeline.BatchRecord) (int, error) {
	if err := h.flushBlobs(ctx); err != nil {
		return 0, err
	}
	return h.Repo.FinishBatch(ctx, workflowID, fins, rec)
}

func done(s pipeline.StepStatus) bool {
	return s == pipeline.StepCompleted || s == pipeline.StepSkipped
}

// safeRun runs body, turning a panic into a failure of this step rather
// than of the process: one bad document must not take down a worker.
func safeRun(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline, body stepFunc) (res outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &steperr.InvalidDocumentError{Reason: fmt.Sprintf("internal error while processing (%v)", r)}
		}
	}()
	return body(ctx, in, pipe)
}

// storageErr is the handlers' name for steperr.Storage.
func storageErr(what string, err error) error { return steperr.Storage(what, err) }

// downloadSource returns the workflow's original document as a file to
// read (extractors and poppler read files) and a cleanup function.
func (h *handlers) downloadSource(ctx context.Context, ref pipeline.WorkflowRef) (string, func(), error) {
	key, err := h.sourceKey(ctx, ref)
	if err != nil {
		return "", nil, err
	}
	return h.sourceFile(ctx, key)
}

// sourceKey is the blob key of the workflow's original document, from its
// document item: an object uploaded to a bucket keeps its own key.
func (h *handlers) sourceKey(ctx context.Context, ref pipeline.WorkflowRef) (string, error) {
	doc, err := h.document(ctx, ref)
	return doc.BlobKey, err
}

// document reads the workflow's document item.
func (h *handlers) document(ctx context.Context, ref pipeline.WorkflowRef) (pipeline.Document, error) {
	doc, err := h.Repo.GetDocument(ctx, ref.ProjectID, ref.DocumentID)
	if err != nil {
		return doc, storageErr("read document", err)
	}
	return doc, nil
}

// sourceFile returns a file holding the blob at key, to read only: the
// store's own file when the store keeps its objects as local files (no
// copy: for many small documents, creating and deleting the copies cost
// more than reading them), else a private temp copy that cleanup removes.
// Either way a blob over the file size limit is refused.
func (h *handlers) sourceFile(ctx context.Context, key string) (string, func(), error) {
	local, ok := h.Blobs.(blob.LocalFiler)
	if !ok {
		return h.tempFile(ctx, key)
	}
	path, info, err := local.LocalFile(ctx, key)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return "", nil, &steperr.InvalidInputError{Reason: "source document is missing from the blob store: " + key}
	case err != nil:
		return "", nil, storageErr("open source", err)
	}
	if max := h.Limits.WithDefaults().MaxFileBytes; info.Size > max {
		return "", nil, &steperr.TooLargeError{Reason: fmt.Sprintf("file is larger than the %d-byte limit", max)}
	}
	return path, func() {}, nil
}

// preparedSource returns what segment_prep found about the document and
// the document itself in a temp file, for the steps that read both.
func (h *handlers) preparedSource(ctx context.Context, ref pipeline.WorkflowRef) (prepInfo, string, func(), error) {
	var prep prepInfo
	if err := h.getJSON(ctx, pipeline.PrepBlobKey(ref), &prep); err != nil {
		return prep, "", nil, err
	}
	if prep.SourceKey == "" { // written before segment_prep recorded it
		key, err := h.sourceKey(ctx, ref)
		if err != nil {
			return prep, "", nil, err
		}
		prep.SourceKey = key
	}
	path, cleanup, err := h.sourceFile(ctx, prep.SourceKey)
	return prep, path, cleanup, err
}

// tempFile downloads a blob into a private temp file and returns its path
// and a cleanup function.
func (h *handlers) tempFile(ctx context.Context, key string) (string, func(), error) {
	f, err := os.CreateTemp(h.TempDir, "docpipe-src-*")
	if err != nil {
		return "", nil, fmt.Errorf("temp file: %w", err)
	}
	if err := h.fill(ctx, key, f); err != nil {
		os.Remove(f.Name())
		return "", nil, err
	}
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}

// download copies a blob to a new file at path.
func (h *handlers) download(ctx context.Context, key, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	return h.fill(ctx, key, f)
}

// fill copies a blob into f, within the file size limit, and closes f.
func (h *handlers) fill(ctx context.Context, key string, f *os.File) error {
	defer f.Close()
	rc, err := h.Blobs.Get(ctx, key)
	if err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			return &steperr.InvalidInputError{Reason: "source document is missing from the blob store: " + key}
		}
		return storageErr("download source", err)
	}
	defer rc.Close()
	// Never let a file over the limit fill the disk: copy at most one
	// byte more than allowed and refuse it if that byte arrives.
	max := h.Limits.WithDefaults().MaxFileBytes
	n, err := f.ReadFrom(io.LimitReader(rc, max+1))
	if err != nil {
		return storageErr("download source", err)
	}
	if n > max {
		return &steperr.TooLargeError{Reason: fmt.Sprintf("file is larger than the %d-byte limit", max)}
	}
	if err := f.Close(); err != nil {
		return storageErr("download source", err)
	}
	return nil
}
