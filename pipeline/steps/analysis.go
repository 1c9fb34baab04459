package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/steperr"
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

// segmentAnalyzer analyses one batch of segments in parallel. A segment
// that cannot be analysed is recorded as failed with its reason and does
// not fail the batch; a storage fault fails the batch so it is retried.
func (h *handlers) segmentAnalyzer(ctx context.Context, in pipeline.StepInput) (outcome, error) {
	b := *in.Batch
	if b.From < 1 || b.To < b.From {
		return outcome{}, &steperr.InvalidInputError{Reason: fmt.Sprintf("bad batch %d: %d..%d", b.Batch, b.From, b.To)}
	}
	segs, err := h.Repo.SegmentsInRange(ctx, in.Workflow.WorkflowID, b.From, b.To)
	if err != nil {
		return outcome{}, storageErr("read segments", err)
	}
	if len(segs) != b.To-b.From+1 {
		return outcome{}, &steperr.InvalidInputError{Reason: fmt.Sprintf("batch %d expects segments %d..%d, the table has %d of them", b.Batch, b.From, b.To, len(segs))}
	}
	if finishedBatch(segs) {
		// A re-run of failed segments leaves finished batches alone.
		return outcome{message: fmt.Sprintf("batch %d: already analysed", b.Batch)}, nil
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
			e, err := h.analyzeOne(gctx, s)
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
	fins := make([]pipeline.SegmentFinish, len(entries))
	failed := 0
	for i, e := range entries {
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
		fins[i] = pipeline.SegmentFinish{Index: e.Index, To: e.Status, Result: res}
	}
	if _, err := h.Repo.FinishSegments(ctx, in.Workflow.WorkflowID, fins); err != nil {
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

// analyzeOne analyses one segment. Its error return is reserved for faults
// worth retrying the whole batch over.
func (h *handlers) analyzeOne(ctx context.Context, s pipeline.Segment) (e BatchEntry, err error) {
	e = BatchEntry{Index: s.Index}
	text, err := blob.GetBytes(ctx, h.Blobs, s.TextKey, maxSegmentTextBytes)
	switch {
	case errors.Is(err, blob.ErrNotFound) && s.Source == "ocr" && strings.HasPrefix(s.Error, ocrFailedPrefix):
		e.Status, e.Error = pipeline.SegmentFailed, s.Error
		return e, nil
	case errors.Is(err, blob.ErrNotFound) && s.Source == "ocr":
		e.Status = pipeline.SegmentSkipped
		e.Error = s.Error
		if e.Error == "" {
			e.Error = "page has no text layer and no OCR text"
		}
		return e, nil
	case errors.Is(err, blob.ErrNotFound):
		e.Status, e.Error = pipeline.SegmentFailed, "segment text is missing from the blob store"
		return e, nil
	case isTooBig(err):
		e.Status, e.Error = pipeline.SegmentFailed, err.Error()
		return e, nil
	case err != nil:
		return e, storageErr("read segment text", err)
	}
	defer func() {
		if r := recover(); r != nil {
			e = BatchEntry{Index: s.Index, Status: pipeline.SegmentFailed, Error: fmt.Sprintf("analysis failed: %v", r)}
			err = nil
		}
	}()
	res := analyze.AnalyzeSegment(string(text), analyze.Options{})
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
