package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
)

// maxSegmentTextBytes bounds one segment's text read into memory; segments
// are pages or bounded sections, so anything bigger is corrupt.
const maxSegmentTextBytes = 64 << 20

// ocrFailedPrefix starts the reason of a page OCR could not read.
const ocrFailedPrefix = "OCR failed"

// segmentKeywords is how many keywords the segment item keeps; the full
// analysis lives in the batch blob.
const segmentKeywords = 5

// BatchEntry is one segment's record in a batch analysis blob.
type BatchEntry struct {
	Index  int                    `json:"index"`
	Status pipeline.SegmentStatus `json:"status"`
	Error  string                 `json:"error,omitempty"`
	Result *analyze.SegmentResult `json:"result,omitempty"`
}

// segmentAnalyzer analyses one batch of segments in parallel, on the
// text the segment stages before it left. A segment that cannot be
// analysed is recorded as failed with its reason and does not fail the
// batch; a storage fault fails the batch so it is retried. As the batch's
// last segment stage it gives every open segment its final status;
// otherwise it records only the failures, and the last stage the rest.
func (h *handlers) segmentAnalyzer(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (outcome, error) {
	b := *in.Batch
	segs, err := h.batchSegments(ctx, in)
	if err != nil {
		return outcome{}, err
	}
	if finishedBatch(segs) {
		// A re-run of failed segments leaves finished batches alone.
		return outcome{message: fmt.Sprintf("batch %d: already analysed", b.Batch)}, nil
	}
	view, err := h.batchView(ctx, in.Workflow, pipe.segmentAncestors(in.Step), b.Batch)
	if err != nil {
		return outcome{}, err
	}
	key := pipeline.BatchAnalysisBlobKey(in.Workflow, b.Batch)
	earlier, err := h.earlierEntries(ctx, key)
	if err != nil {
		return outcome{}, err
	}
	entries := make([]BatchEntry, len(segs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.parallelism())
	for i, s := range segs {
		// A segment that already has its final result keeps it: a re-run
		// (or a retried batch) redoes only what is not finished.
		if e, ok := earlier[s.Index]; ok && s.Status == e.Status && (s.Status == pipeline.SegmentDone || s.Status == pipeline.SegmentSkipped) {
			entries[i] = e
			continue
		}
		g.Go(func() error {
			e, err := h.analyzeOne(gctx, s, view)
			entries[i] = e
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return outcome{}, err
	}
	if err := h.putJSON(ctx, key, entries); err != nil {
		return outcome{}, err
	}
	last := pipe.lastSegment == in.Step
	fins := make([]pipeline.SegmentFinish, 0, len(entries))
	failed := 0
	for _, e := range entries {
		res := pipeline.SegmentResult{ResultKey: key, Error: e.Error}
		if e.Result != nil {
			res.Language = e.Result.Language
			res.Keywords = []string{}
			for _, k := range e.Result.Keywords[:min(segmentKeywords, len(e.Result.Keywords))] {
				res.Keywords = append(res.Keywords, k.Term)
			}
		}
		if e.Status == pipeline.SegmentFailed {
			failed++
		}
		if _, upstream := view.failed[e.Index]; upstream || !last && e.Status != pipeline.SegmentFailed {
			continue // recorded by the stage that failed it, or left to the last stage
		}
		fins = append(fins, pipeline.SegmentFinish{Index: e.Index, To: e.Status, Result: res})
	}
	if _, err := h.finishSegments(ctx, in.Workflow.WorkflowID, fins); err != nil {
		return outcome{}, storageErr("record segments", err)
	}
	return outcome{message: fmt.Sprintf("batch %d: %d segments, %d failed", b.Batch, len(entries), failed)}, nil
}

// earlierEntries reads the batch's analysis blob of an earlier attempt, by
// segment index; none yet is not an error.
func (h *handlers) earlierEntries(ctx context.Context, key string) (map[int]BatchEntry, error) {
	raw, err := blob.GetBytes(ctx, h.Blobs, key, maxArtifactBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storageErr("read earlier analysis", err)
	}
	var list []BatchEntry
	if json.Unmarshal(raw, &list) != nil {
		return nil, nil // unreadable: analyse everything again
	}
	byIndex := make(map[int]BatchEntry, len(list))
	for _, e := range list {
		byIndex[e.Index] = e
	}
	return byIndex, nil
}

// analyzeOne analyses one segment's current text. Its error return is
// reserved for faults worth retrying the whole batch over.
func (h *handlers) analyzeOne(ctx context.Context, s pipeline.Segment, view segmentView) (e BatchEntry, err error) {
	e = BatchEntry{Index: s.Index}
	text, status, reason, err := h.readSegment(ctx, s, view)
	if err != nil || status != "" {
		e.Status, e.Error = status, reason
		return e, err
	}
	defer func() {
		if r := recover(); r != nil {
			e = BatchEntry{Index: s.Index, Status: pipeline.SegmentFailed, Error: fmt.Sprintf("analysis failed: %v", r)}
			err = nil
		}
	}()
	res := analyze.AnalyzeSegment(text, analyze.Options{})
	e.Status, e.Result = pipeline.SegmentDone, &res
	return e, nil
}

// finishedBatch reports whether every segment of a batch has its final
// result (a failed one is worth another try).
func finishedBatch(segs []pipeline.Segment) bool {
	for _, s := range segs {
		if s.Status != pipeline.SegmentDone && s.Status != pipeline.SegmentSkipped {
			return false
		}
	}
	return true
}

func isTooBig(err error) bool {
	var tl *blob.TooLargeError
	return errors.As(err, &tl)
}
