package steps

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/audio"
	"github.com/docpipe/docpipe/pipeline/sniff"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// segmentPrep sniffs the real format from the bytes, enforces the limits
// and records what it found. Every rejection names its reason.
func (h *handlers) segmentPrep(ctx context.Context, in pipeline.StepInput, _ *workflowPipeline) (outcome, error) {
	if h.OCR != nil {
		// format_parser's cache key needs to know whether OCR works,
		// which costs a tool process the first time: ask now, while
		// this step runs.
		go h.OCR.Available()
	}
	doc, err := h.document(ctx, in.Workflow)
	if err != nil {
		return outcome{}, err
	}
	key := doc.BlobKey
	path, cleanup, err := h.sourceFile(ctx, key)
	if err != nil {
		return outcome{}, err
	}
	defer cleanup()
	limits := h.Limits.WithDefaults()
	info, err := sniff.Inspect(ctx, path, limits)
	if err != nil {
		return outcome{}, err
	}
	prep := prepInfo{Format: info.Format, MIMEType: info.MIMEType, Encoding: info.Encoding, Size: info.Size, SourceKey: key, SHA256: doc.SHA256}
	if info.Format == extract.FormatPDF {
		prep.PDF = h.PDF.Name()
		n, ok := h.countedBefore(ctx, in.Workflow, prep)
		if !ok {
			if n, err = h.PDF.Pages(ctx, path); err != nil {
				return outcome{}, err
			}
		}
		if n > limits.MaxPages {
			return outcome{}, &steperr.TooLargeError{Reason: fmt.Sprintf("%d pages, the limit is %d", n, limits.MaxPages)}
		}
		prep.Pages = n
	}
	if err := h.putJSON(ctx, pipeline.PrepBlobKey(in.Workflow), prep); err != nil {
		return outcome{}, err
	}
	mime := prep.MIMEType
	msg := string(prep.Format)
	if prep.Pages > 0 {
		msg += fmt.Sprintf(", %d pages", prep.Pages)
	}
	return outcome{message: msg, info: &pipeline.WorkflowInfo{MIMEType: &mime}}, nil
}

// countedBefore is the page count of the PDF prep describes, as the
// workflow ref supersedes counted it with the same backend: a backfill
// need not walk a big document's page tree again. ok is false when
// there is none to trust (no predecessor, other bytes, another
// backend, or the cache is off).
func (h *handlers) countedBefore(ctx context.Context, ref pipeline.WorkflowRef, prep prepInfo) (int, bool) {
	if cacheOff(ctx) || prep.SHA256 == "" {
		return 0, false
	}
	wf, err := h.Repo.GetWorkflow(ctx, ref.DocumentID, ref.WorkflowID)
	if err != nil || wf.Supersedes == "" {
		return 0, false
	}
	before := ref
	before.WorkflowID = wf.Supersedes
	var was prepInfo
	if h.getJSON(ctx, pipeline.PrepBlobKey(before), &was) != nil {
		return 0, false // gone, or never written: count
	}
	if was.SHA256 != prep.SHA256 || was.PDF != prep.PDF || was.Pages <= 0 {
		return 0, false
	}
	return was.Pages, true
}

// languageSampleBytes is how much of the extracted text the document's
// language is detected from.
const languageSampleBytes = 20 << 10

// formatParser extracts text per page or section, writes one text blob
// per segment, and stores and returns the document's attributes (format,
// language, pages) for the stages' `when` conditions.
func (h *handlers) formatParser(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (outcome, error) {
	if res, ok, err := h.reuseExtraction(ctx, in, pipe); err != nil || ok {
		return res, err
	}
	prep, path, cleanup, err := h.preparedSource(ctx, in.Workflow)
	if err != nil {
		return outcome{}, err
	}
	defer cleanup()
	if x, ok := h.PDF.(extract.PageStreamer); ok && prep.Format == extract.FormatPDF {
		return h.parseStreamed(ctx, in, prep, path, pdfSource(x, prep))
	}
	if stream := flowingStreamer(prep.Format); stream != nil {
		return h.parseStreamed(ctx, in, prep, path, streamSource{name: string(prep.Format), stream: stream})
	}
	units, err := h.extract(ctx, prep, path)
	if err != nil {
		return outcome{}, err
	}
	if len(units) == 0 {
		return outcome{}, &steperr.InvalidDocumentError{Reason: "the document contains no text"}
	}
	limits := h.Limits.WithDefaults()
	if len(units) > limits.MaxPages {
		return outcome{}, &steperr.TooLargeError{Reason: fmt.Sprintf("%d segments, the limit is %d", len(units), limits.MaxPages)}
	}
	doc := &pipeline.DocAttrs{Format: string(prep.Format), Language: detectLanguage(units), Pages: len(units)}
	if err := h.putJSON(ctx, pipeline.DocAttrsBlobKey(in.Workflow), doc); err != nil {
		return outcome{}, err
	}
	infos := make([]unitInfo, len(units))
	// One unit is done when its text is stored (or left to OCR or
	// transcription).
	progress := h.Repo.NewProgressRecorder(in.Workflow.WorkflowID, in.Step, len(units), units[0].Kind+"s")
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.parallelism() * 4) // blob writes wait on I/O, not CPU
	for i, u := range units {
		infos[i] = unitInfo{Index: i + 1, Kind: u.Kind, Chars: len(u.Text), NeedsOCR: u.NeedsOCR, Audio: u.Audio}
		if u.NeedsOCR || u.Audio != nil {
			progress.Add(ctx, 1)
			continue
		}
		text := u.Text
		key := pipeline.SegmentTextBlobKey(in.Workflow, i+1)
		g.Go(func() error {
			if err := blob.PutBytes(gctx, h.Blobs, key, []byte(text)); err != nil {
				return storageErr("write segment text", err)
			}
			progress.Add(gctx, 1)
			return nil
		})
		units[i].Text = "" // let the text go once it is queued
	}
	if err := g.Wait(); err != nil {
		return outcome{}, err
	}
	progress.Finish(ctx)
	if err := h.putJSON(ctx, pipeline.UnitsBlobKey(in.Workflow), infos); err != nil {
		return outcome{}, err
	}
	total := len(infos)
	return outcome{message: fmt.Sprintf("%d %ss", total, units[0].Kind), doc: doc, info: &pipeline.WorkflowInfo{TotalSegments: &total}}, nil
}

// detectLanguage names the language of the first languageSampleBytes of
// the document's text, "" when it cannot tell.
func detectLanguage(units []extract.Unit) string {
	var sample strings.Builder
	for _, u := range units {
		if sample.Len() >= languageSampleBytes {
			break
		}
		sample.WriteString(u.Text[:min(len(u.Text), languageSampleBytes-sample.Len())])
		sample.WriteString("\n\n")
	}
	text := strings.ToValidUTF8(sample.String(), "")
	if strings.TrimSpace(text) == "" {
		return ""
	}
	lang := analyze.AnalyzeSegment(text, analyze.Options{}).Language
	if lang == analyze.Undetermined {
		return ""
	}
	return lang
}

// extract dispatches on the sniffed format.
func (h *handlers) extract(ctx context.Context, prep prepInfo, path string) ([]extract.Unit, error) {
	limits := h.Limits.WithDefaults()
	switch {
	case prep.Format == extract.FormatPDF:
		return h.PDF.Extract(ctx, path, limits)
	case prep.Format.IsImage():
		return []extract.Unit{{Index: 1, Kind: "page", NeedsOCR: true}}, nil
	case prep.Format.IsAudio():
		return audio.Units(ctx, path, prep.Format, h.AudioSpan)
	}
	return extractFlowing(ctx, prep, path, limits)
}

// ocr turns pages without a text layer into text, or marks them skipped
// with the reason when no OCR engine is installed.
func (h *handlers) ocr(ctx context.Context, in pipeline.StepInput, _ *workflowPipeline) (outcome, error) {
	var units []unitInfo
	if err := h.getJSON(ctx, pipeline.UnitsBlobKey(in.Workflow), &units); err != nil {
		return outcome{}, err
	}
	var todo []int
	for i, u := range units {
		if u.NeedsOCR && !u.OCRDone && u.SkipReason == "" && u.OCRError == "" {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		if slices.ContainsFunc(units, func(u unitInfo) bool { return u.Audio != nil }) {
			return h.transcribeSpans(ctx, in, units)
		}
		return outcome{message: "no pages need OCR"}, nil
	}
	reason := "OCR engine not configured"
	available := false
	if h.OCR != nil {
		available, reason = h.OCR.Available()
	}
	if !available {
		for _, i := range todo {
			units[i].SkipReason = reason
		}
		if err := h.putJSON(ctx, pipeline.UnitsBlobKey(in.Workflow), units); err != nil {
			return outcome{}, err
		}
		return outcome{status: pipeline.StepSkipped, message: fmt.Sprintf("%d pages skipped: %s", len(todo), reason)}, nil
	}
	prep, path, cleanup, err := h.preparedSource(ctx, in.Workflow)
	if err != nil {
		return outcome{}, err
	}
	defer cleanup()
	progress := h.Repo.NewProgressRecorder(in.Workflow.WorkflowID, in.Step, len(todo), "pages")
	recognized, err := h.recognize(ctx, in.Workflow, prep, path, units, todo, progress)
	if err != nil {
		return outcome{}, err
	}
	progress.Finish(ctx)
	if err := h.putJSON(ctx, pipeline.UnitsBlobKey(in.Workflow), units); err != nil {
		return outcome{}, err
	}
	return outcome{message: fmt.Sprintf("%d of %d pages recognised with %s", recognized, len(todo), h.OCR.Name())}, nil
}

// segmentBuilder writes the segment items and the manifest of batches.
func (h *handlers) segmentBuilder(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (outcome, error) {
	var units []unitInfo
	if err := h.getJSON(ctx, pipeline.UnitsBlobKey(in.Workflow), &units); err != nil {
		return outcome{}, err
	}
	segs := make([]pipeline.Segment, len(units))
	for i, u := range units {
		s := pipeline.Segment{
			WorkflowID: in.Workflow.WorkflowID,
			Index:      u.Index,
			Kind:       u.Kind,
			Status:     pipeline.SegmentPending,
			Source:     "text",
			TextKey:    cmp.Or(u.TextKey, pipeline.SegmentTextBlobKey(in.Workflow, u.Index)),
			ImageKey:   u.ImageKey,
			Chars:      u.Chars,
		}
		if u.NeedsOCR {
			s.Source = "ocr"
			s.Error = u.SkipReason // why the page has no text, if it has none
			if u.OCRError != "" {
				s.Error = u.OCRError
			}
		}
		if u.Audio != nil {
			s.Source, s.Span = "audio", u.Audio
			s.Error = u.SkipReason
			if u.TranscriptError != "" {
				s.Error = u.TranscriptError
			}
		}
		segs[i] = s
	}
	// Overwriting is safe: no segment is analysed before this step
	// completes, so a retried build cannot reset finished work.
	if err := h.Repo.PutSegments(ctx, segs); err != nil {
		return outcome{}, storageErr("write segments", err)
	}
	manifest := BuildManifest(len(units), pipe.def.BatchSize)
	key := pipeline.ManifestBlobKey(in.Workflow)
	if err := h.putJSON(ctx, key, manifest); err != nil {
		return outcome{}, err
	}
	offer, err := h.extractionOffer(ctx, in.Workflow, pipe)
	if err != nil {
		return outcome{}, err
	}
	return outcome{message: fmt.Sprintf("%d segments in %d batches", len(units), len(manifest)), offers: offer}, nil
}

// BuildManifest splits segments 1..n into batches of at most size.
func BuildManifest(n, size int) []pipeline.Batch {
	if size <= 0 {
		size = 100
	}
	batches := make([]pipeline.Batch, 0, (n+size-1)/size)
	for from := 1; from <= n; from += size {
		to := min(from+size-1, n)
		batches = append(batches, pipeline.Batch{Batch: len(batches) + 1, From: from, To: to})
	}
	return batches
}

// finalize decides the outcome from the segment counters: completed (maybe
// with failed or skipped segments), or failed when no segment succeeded and
// some failed.
func (h *handlers) finalize(ctx context.Context, payload []byte) ([]byte, error) {
	in, err := decodeInput(payload)
	if err != nil {
		return nil, err
	}
	var out []byte
	prog, err := h.start(ctx, in.Workflow, "complete workflow", func(prog *pipeline.StepProgress) (pipeline.StepStart, error) {
		out = nil
		if prog.Status == pipeline.WorkflowCompleted {
			var err error
			out, err = encodeOutput(pipeline.StepOutput{Step: in.Step, Skipped: true, Message: "already completed"})
			return pipeline.StepStart{}, err
		}
		pipe, err := h.pipelineOf(ctx, *prog)
		if err != nil {
			return pipeline.StepStart{}, err
		}
		if !pipe.hasSegmentStages() && prog.SegmentsDone+prog.SegmentsFailed+prog.SegmentsSkipped != prog.TotalSegments {
			// No segment stage ran to give the segments their final status:
			// they are done as built (or skipped/failed as their text says).
			if *prog, err = h.finishAllOpenSegments(ctx, in.Workflow); err != nil {
				return pipeline.StepStart{}, err
			}
		}
		if finished := prog.SegmentsDone + prog.SegmentsFailed + prog.SegmentsSkipped; finished != prog.TotalSegments {
			return pipeline.StepStart{}, &steperr.UnexpectedError{Reason: fmt.Sprintf("%d of %d segments have no result", prog.TotalSegments-finished, prog.TotalSegments)}
		}
		if prog.EverySegmentFailed() { // and every segment has ended (above)
			// The first segment's reason goes with it, as for a partial result.
			note, err := h.failedSegmentsNote(ctx, in.Workflow.WorkflowID, prog.SegmentsFailed)
			if err != nil {
				return pipeline.StepStart{}, err
			}
			return pipeline.StepStart{}, &steperr.SegmentsFailedError{Reason: "all " + note}
		}
		// The segment stages still open close, the step before is recorded
		// complete, and the workflow completes, in one write. prog's
		// counters are final (checked above): the stages closing do not
		// change what the outcome event says.
		start := pipeline.StepStart{Steps: batchStageChanges("", *prog, pipe), Outcome: pipeline.WorkflowCompleted}
		if prog.SegmentsFailed > 0 {
			if start.Note, err = h.failedSegmentsNote(ctx, in.Workflow.WorkflowID, prog.SegmentsFailed); err != nil {
				return pipeline.StepStart{}, err
			}
		}
		return start, nil
	})
	switch {
	case err != nil:
		return nil, err
	case out != nil:
		return out, nil
	}
	return encodeOutput(pipeline.StepOutput{Step: in.Step, Message: prog.SegmentCounts()})
}

// failedSegmentsNote says why a workflow completed with failed segments:
// how many, and the first one's reason ("1 segment failed: segment 2,
// words: exit status 3").
func (h *handlers) failedSegmentsNote(ctx context.Context, workflowID string, failed int) (string, error) {
	errFound := errors.New("found")
	var first pipeline.Segment
	err := h.Repo.EachSegment(ctx, workflowID, func(s pipeline.Segment) error {
		if s.Status != pipeline.SegmentFailed {
			return nil
		}
		first = s
		return errFound
	})
	switch {
	case errors.Is(err, errFound):
		return fmt.Sprintf("%s failed: segment %d, %s", pipeline.SegmentCount(failed), first.Index, first.Error), nil
	case err != nil:
		return "", err
	}
	return pipeline.SegmentCount(failed) + " failed", nil
}

// finishAllOpenSegments gives every open segment of a pipeline without a
// segment stage its final status (done when it has text, otherwise as
// readSegment says) and returns the progress afterwards.
func (h *handlers) finishAllOpenSegments(ctx context.Context, ref pipeline.WorkflowRef) (pipeline.StepProgress, error) {
	var fins []pipeline.SegmentFinish
	for token := ""; ; {
		segs, next, err := h.Repo.ListSegments(ctx, ref.WorkflowID, 1000, token)
		if err != nil {
			return pipeline.StepProgress{}, storageErr("read segments", err)
		}
		for _, s := range segs {
			if s.Status != pipeline.SegmentPending {
				continue
			}
			to, reason := pipeline.SegmentDone, ""
			if s.Source == "ocr" || s.Source == "audio" {
				_, st, why, err := h.readSegment(ctx, s, segmentView{})
				if err != nil {
					return pipeline.StepProgress{}, err
				}
				if st != "" {
					to, reason = st, why
				}
			}
			fins = append(fins, pipeline.SegmentFinish{Index: s.Index, From: s.Status, To: to, Result: pipeline.SegmentResult{Error: reason}})
		}
		if token = next; token == "" {
			break
		}
	}
	if _, err := h.finishSegments(ctx, ref.WorkflowID, fins); err != nil {
		return pipeline.StepProgress{}, storageErr("record segments", err)
	}
	prog, err := h.Repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		return prog, storageErr("read progress", err)
	}
	return prog, nil
}

// workflowFailed records a failure the state machine caught: the steps still
// in progress are marked failed, and the workflow with them, with the reason.
func (h *handlers) workflowFailed(ctx context.Context, payload []byte) ([]byte, error) {
	in, err := decodeInput(payload)
	if err != nil {
		return nil, err
	}
	reason := FailureReason(in.Error)
	// What the steps before left is recorded first, and the step item
	// read afresh.
	prog, err := h.Recorder.Start(ctx, in.Workflow, nil)
	if err != nil {
		return nil, storageErr("read progress", err)
	}
	closed, err := h.closeAnsweredStages(ctx, in.Workflow, prog)
	if err != nil {
		return nil, err
	}
	for name, st := range prog.Steps {
		if st.Status == pipeline.StepInProgress && !closed[name] {
			if _, err := h.Repo.TransitionSteps(ctx, in.Workflow, pipeline.StepChange{Step: name, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepFailed, Error: reason}); err != nil {
				return nil, storageErr("fail step", err)
			}
		}
	}
	if _, err := h.Repo.SetWorkflowStatus(ctx, in.Workflow, []pipeline.WorkflowStatus{pipeline.WorkflowPending, pipeline.WorkflowInProgress}, pipeline.WorkflowFailed, reason); err != nil {
		return nil, storageErr("fail workflow", err)
	}
	return encodeOutput(pipeline.StepOutput{Step: in.Step, Message: reason})
}

// closeAnsweredStages closes, in a workflow whose every segment ended
// failed (finalize said so), the segment stages still open by what they
// did themselves (stageChanges), not by the workflow's failure. It
// returns the stages it closed.
func (h *handlers) closeAnsweredStages(ctx context.Context, ref pipeline.WorkflowRef, prog pipeline.StepProgress) (map[string]bool, error) {
	closed := map[string]bool{}
	if !prog.EverySegmentFailed() {
		return closed, nil
	}
	pipe, err := h.pipelineOf(ctx, prog)
	if err != nil {
		return closed, nil // the failure is recorded all the same
	}
	closes, err := h.stageChanges(ctx, ref, "", prog, pipe)
	if err != nil {
		return nil, err
	}
	for _, c := range closes {
		closed[c.Step] = true
	}
	if _, err := h.Repo.TransitionSteps(ctx, ref, closes...); err != nil {
		return nil, storageErr("close segment stages", err)
	}
	return closed, nil
}

// stageChanges closes the open segment stages step waits for (all of
// them for step ""), as batchStageChanges says, and in a workflow whose
// every segment ended failed, by what each did itself: the one that
// failed segments fails, and one that answered segments it was given (a
// sibling's failure does not stop a stage; an upstream one does)
// completes. A stage that answered none stays open, to fail with the
// workflow, which fails with every segment failed: completed, it would
// promise an output it does not have.
func (h *handlers) stageChanges(ctx context.Context, ref pipeline.WorkflowRef, step string, prog pipeline.StepProgress, pipe *workflowPipeline) ([]pipeline.StepChange, error) {
	changes := batchStageChanges(step, prog, pipe)
	if !prog.EverySegmentFailed() || len(changes) == 0 {
		return changes, nil
	}
	failers := map[string]bool{} // the stages that failed a segment
	if err := h.Repo.EachSegment(ctx, ref.WorkflowID, func(s pipeline.Segment) error {
		failers[s.Stage] = true
		return nil
	}); err != nil {
		return nil, storageErr("read segments", err)
	}
	var closes []pipeline.StepChange
	for _, c := range changes {
		before := pipe.def.Ancestors(c.Step)
		answered := false
		for f := range failers {
			// A segment failed before any stage ran (no text, its
			// OCR failed) was given to none.
			given := f != "" && !slices.Contains(pipeline.IngestionStages, f)
			answered = answered || given && f != c.Step && !slices.Contains(before, f)
		}
		if c.To == pipeline.StepFailed || answered {
			closes = append(closes, c)
		}
	}
	return closes, nil
}

// FailureReason renders a caught error for people. Lambda puts a JSON
// object with errorMessage in Cause; activities and the local engine put
// the message itself.
func FailureReason(e *pipeline.CaughtError) string {
	if e == nil {
		return "failed (no error recorded)"
	}
	cause := e.Cause
	var lambdaErr struct {
		ErrorMessage string `json:"errorMessage"`
	}
	if strings.HasPrefix(strings.TrimSpace(cause), "{") && json.Unmarshal([]byte(cause), &lambdaErr) == nil && lambdaErr.ErrorMessage != "" {
		cause = lambdaErr.ErrorMessage
	}
	switch {
	case cause == "":
		return e.Error
	case e.Error == "" || slices.Contains(steperr.PermanentNames, e.Error) || e.Error == steperr.NameTransient:
		return cause // our own errors say what they are
	}
	return e.Error + ": " + cause
}
