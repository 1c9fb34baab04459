package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/pipeline/transcribe"
)

// stageLine is one segment's line in a segment stage's batch results.
type stageLine = stageoutput.Line

// replacementText is the "text" a segment stage's output replaces the
// segment text with, if it has one.
func replacementText(l stageLine) (string, bool) {
	var out struct {
		Text *string `json:"text"`
	}
	if len(l.Output) == 0 || l.Output[0] != '{' || json.Unmarshal(l.Output, &out) != nil || out.Text == nil {
		return "", false
	}
	return *out.Text, true
}

// batchStore is how a segment stage's results of one batch are kept.
type batchStore interface {
	key(ref pipeline.WorkflowRef, stage string, batch int) string
	// load reads the lines by segment index; none stored is empty.
	load(ctx context.Context, h *handlers, key string) (map[int]stageLine, error)
	save(ctx context.Context, h *handlers, key string, lines []stageLine) error
}

// linesStore keeps a batch's lines as JSON Lines in index order
// (pipeline.StageBatchBlobKey): users' stages and AI analyses.
type linesStore struct{}

func (linesStore) key(ref pipeline.WorkflowRef, stage string, batch int) string {
	return pipeline.StageBatchBlobKey(ref, stage, batch)
}

// load reads the lines; a line that is not one is corrupt, which fails
// the step rather than passing for a segment never answered.
func (linesStore) load(ctx context.Context, h *handlers, key string) (map[int]stageLine, error) {
	raw, found, err := h.getOptional(ctx, key)
	if err != nil || !found {
		return nil, err
	}
	return stageoutput.DecodeLines(key, raw)
}

func (linesStore) save(ctx context.Context, h *handlers, key string, lines []stageLine) error {
	raw, err := stageoutput.EncodeLines(lines)
	if err != nil {
		return err
	}
	if err := blob.PutBytes(ctx, h.Blobs, key, raw); err != nil {
		return storageErr("write stage output", err)
	}
	return nil
}

// segmentView is a batch as the segment stages before one stage left it:
// the latest replacement of each segment's text, and the segments one of
// them failed (which later stages leave alone). The original
// segments/<n>/text.txt is never overwritten.
type segmentView struct {
	text   map[int]string
	failed map[int]string // index → reason
}

// batchView builds the view of batch for the given segment stages, in
// topological order: a later replacement wins, a failure sticks. The
// default pipeline's single segment stage has no stages before it, so it
// reads nothing here.
func (h *handlers) batchView(ctx context.Context, ref pipeline.WorkflowRef, stages []pipeline.Stage, batch int) (segmentView, error) {
	v := segmentView{text: map[int]string{}, failed: map[int]string{}}
	for _, st := range stages {
		lines, err := h.stageLines(ctx, ref, st, batch)
		if err != nil {
			return v, err
		}
		for i, l := range lines {
			if l.Error != "" {
				v.fail(i, l.Error)
			} else if text, ok := replacementText(l); ok {
				v.text[i] = text
			}
		}
	}
	return v, nil
}

// stageLines reads segment stage st's results of one batch.
func (h *handlers) stageLines(ctx context.Context, ref pipeline.WorkflowRef, st pipeline.Stage, batch int) (map[int]stageLine, error) {
	kind, ok := h.kinds[pipeline.HandlerFor(st)]
	if !ok {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("stage %s does not run at segment scope", st.Name)}
	}
	store := kind.store()
	return store.load(ctx, h, store.key(ref, st.Name, batch))
}

func (v segmentView) fail(index int, reason string) {
	if _, already := v.failed[index]; !already {
		v.failed[index] = reason
	}
	delete(v.text, index)
}

// readSegment returns a segment's current text, or, when it has none to
// work on, the final status it takes and why. The error return is kept
// for faults worth retrying the whole batch over.
func (h *handlers) readSegment(ctx context.Context, s pipeline.Segment, v segmentView) (text string, status pipeline.SegmentStatus, reason string, err error) {
	if why, ok := v.failed[s.Index]; ok {
		return "", pipeline.SegmentFailed, why, nil
	}
	if t, ok := v.text[s.Index]; ok {
		return t, "", "", nil
	}
	raw, err := blob.GetBytes(ctx, h.Blobs, s.TextKey, maxSegmentTextBytes)
	switch {
	case errors.Is(err, blob.ErrNotFound) && s.Source == "ocr" && strings.HasPrefix(s.Error, ocrFailedPrefix):
		return "", pipeline.SegmentFailed, s.Error, nil
	case errors.Is(err, blob.ErrNotFound) && s.Source == "ocr":
		if s.Error == "" {
			return "", pipeline.SegmentSkipped, "page has no text layer and no OCR text", nil
		}
		return "", pipeline.SegmentSkipped, s.Error, nil
	case errors.Is(err, blob.ErrNotFound) && s.Source == "audio" && strings.HasPrefix(s.Error, transcribe.FailedPrefix):
		return "", pipeline.SegmentFailed, s.Error, nil
	case errors.Is(err, blob.ErrNotFound) && s.Source == "audio":
		if s.Error == "" {
			return "", pipeline.SegmentSkipped, "no transcript", nil
		}
		return "", pipeline.SegmentSkipped, s.Error, nil
	case errors.Is(err, blob.ErrNotFound):
		return "", pipeline.SegmentFailed, "segment text is missing from the blob store", nil
	case isTooBig(err):
		return "", pipeline.SegmentFailed, err.Error(), nil
	case err != nil:
		return "", "", "", storageErr("read segment text", err)
	}
	return string(raw), "", "", nil
}

// batchSegments reads a batch's segment items, checking they are all there.
func (h *handlers) batchSegments(ctx context.Context, in pipeline.StepInput) ([]pipeline.Segment, error) {
	b := *in.Batch
	if b.From < 1 || b.To < b.From {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("bad batch %d: %d..%d", b.Batch, b.From, b.To)}
	}
	segs, err := h.Repo.SegmentsInRange(ctx, in.Workflow.WorkflowID, b.From, b.To)
	if err != nil {
		return nil, storageErr("read segments", err)
	}
	if len(segs) != b.To-b.From+1 {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("batch %d expects segments %d..%d, the table has %d of them", b.Batch, b.From, b.To, len(segs))}
	}
	return segs, nil
}

// finishOpenSegments gives the batch's open segments their final status
// when the batch's last segment stage was skipped: done when they have
// text, as readSegment says otherwise. Segments a stage before failed
// stay failed.
func (h *handlers) finishOpenSegments(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (int, error) {
	segs, err := h.batchSegments(ctx, in)
	if err != nil {
		return 0, err
	}
	v, err := h.batchView(ctx, in.Workflow, pipe.segmentAncestors(in.Step), in.Batch.Batch)
	if err != nil {
		return 0, err
	}
	var fins []pipeline.SegmentFinish
	for _, s := range segs {
		if s.Status != pipeline.SegmentPending {
			continue
		}
		to, reason := pipeline.SegmentDone, ""
		if _, replaced := v.text[s.Index]; !replaced && (s.Source == "ocr" || s.Source == "audio" || v.failed[s.Index] != "") {
			_, st, why, err := h.readSegment(ctx, s, v)
			if err != nil {
				return 0, err
			}
			if st != "" {
				to, reason = st, why
			}
		}
		fins = append(fins, pipeline.SegmentFinish{Index: s.Index, From: s.Status, To: to, Result: pipeline.SegmentResult{Error: reason}})
	}
	n, err := h.finishSegments(ctx, in.Workflow.WorkflowID, fins)
	if err != nil {
		return n, storageErr("record segments", err)
	}
	return n, nil
}
