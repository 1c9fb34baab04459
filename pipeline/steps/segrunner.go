package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
)

// segmentKind is what one kind of segment stage (the builtin analysis, a
// user's command, HTTP or Lambda stage, an AI analysis) supplies to the
// one runner every segment stage shares (runSegments): where its results
// live and how it answers segments. Everything else — which segments are
// open, the view of what upstream stages left, bounded fan-out, writing
// the results, finishing segments — is the runner's.
type segmentKind interface {
	// store is how the stage's results of one batch are kept.
	store() batchStore
	// open readies the stage for one batch: what it answers segments
	// with, and a cleanup to run when the batch is done.
	open(ctx context.Context, h *handlers, in pipeline.StepInput, pipe *workflowPipeline, st pipeline.Stage) (segmentWork, func(), error)
	// summary is what a segment item records of an earlier successful
	// answer when this stage finishes the segment (its language,
	// keywords); new answers carry it (segmentAnswer).
	summary(l stageLine) (language string, keywords []string)
}

// segmentAnswer is a stage's answer for one segment: the line its results
// keep, and what the segment item records when this stage finishes it.
type segmentAnswer struct {
	line     stageLine
	language string
	keywords []string
}

// segmentCall is one open segment handed to a stage: its index and its
// text as the stages before left it.
type segmentCall struct {
	Index int
	Text  string
}

// segmentWork answers a batch's open segments, one answer each, in the
// order of calls. An answer whose line has an Error fails that segment
// alone; a returned error fails the batch, which the state machine
// retries when the error is transient.
type segmentWork func(ctx context.Context, calls []segmentCall) ([]segmentAnswer, error)

// eachSegment makes a segmentWork of a per-segment function, at most
// limit segments at once.
func eachSegment(limit int, one func(ctx context.Context, c segmentCall) (segmentAnswer, error)) segmentWork {
	return func(ctx context.Context, calls []segmentCall) ([]segmentAnswer, error) {
		lines := make([]segmentAnswer, len(calls))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(limit)
		for i, c := range calls {
			g.Go(func() (err error) {
				lines[i], err = one(gctx, c)
				return err
			})
		}
		return lines, g.Wait()
	}
}

// segmentStage is the step body of every segment stage: kind's work run
// through runSegments.
func (h *handlers) segmentStage(kind segmentKind) stepFunc {
	return func(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (outcome, error) {
		return h.runSegments(ctx, in, pipe, kind)
	}
}

// runSegments runs a segment stage on one batch.
//
// A segment the stage has answered before (a retried batch, a resumed
// run) keeps that answer, unless it failed and the segment was reset for
// a re-run. Where the stage cache is on, an open segment is looked up
// there instead: its earlier answer is found again when its inputs are
// the same, and a re-run from an earlier stage that changed them runs it. A segment an upstream stage failed, or that has no text, is
// not run. The rest are handed to the stage at once. The stage's answers
// are stored, then the segments finished: a failure by any stage at once,
// done only by a stage no other segment stage waits for (a sink). The
// table orders outcomes (a failure outranks done), so sibling sinks
// finishing in any order leave a segment failed if either failed it.
func (h *handlers) runSegments(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline, kind segmentKind) (outcome, error) {
	b := *in.Batch
	st, _ := pipe.def.Stage(in.Step) // batch() checked it exists
	segs, err := h.batchSegments(ctx, in)
	if err != nil {
		return outcome{}, err
	}
	store := kind.store()
	key := store.key(in.Workflow, st.Name, b.Batch)
	earlier, err := store.load(ctx, h, key)
	if err != nil {
		return outcome{}, err
	}
	view, err := h.batchView(ctx, in.Workflow, pipe.segmentAncestors(st.Name), b.Batch)
	if err != nil {
		return outcome{}, err
	}
	sink := pipe.isSegmentSink(st.Name)
	_, cached := kind.(cachedKind)
	cached = cached && h.cacheOn(ctx, st)
	lines := make([]*segmentAnswer, len(segs))
	var fins []pipeline.SegmentFinish
	var todo []int // positions in segs the stage is to answer
	for i, s := range segs {
		_, upstreamFailed := view.failed[s.Index]
		open := s.Status == pipeline.SegmentPending
		if l, ok := earlier[s.Index]; ok && !upstreamFailed && (l.Error == "" && !(open && cached) || !open) {
			a := segmentAnswer{line: l}
			if l.Error == "" && sink {
				a.language, a.keywords = kind.summary(l)
			}
			lines[i] = &a
			continue
		}
		todo = append(todo, i)
	}
	calls, at, idle, err := h.segmentCalls(ctx, segs, todo, view)
	if err != nil {
		return outcome{}, err
	}
	fins = append(fins, idle...)
	cache, err := h.segmentCache(ctx, in, pipe, st, kind, calls)
	if err != nil {
		return outcome{}, err
	}
	reused, own := 0, 0
	calls, at = slices.Clone(calls), slices.Clone(at)
	for j := len(calls) - 1; j >= 0; j-- {
		if l := cache.hits[j]; l != nil {
			a := segmentAnswer{line: *l}
			a.line.Index = calls[j].Index
			if sink {
				a.language, a.keywords = kind.summary(a.line)
			}
			lines[at[j]] = &a
			calls, at = slices.Delete(calls, j, j+1), slices.Delete(at, j, j+1)
			cache.keys = slices.Delete(cache.keys, j, j+1)
			if l.ReusedFrom != "" {
				reused++
			} else {
				own++ // the workflow's own earlier answer
			}
		}
	}
	if len(calls) > 0 {
		work, cleanup, err := kind.open(ctx, h, in, pipe, st)
		if err != nil {
			return outcome{}, err
		}
		answers, err := work(ctx, calls)
		cleanup()
		if err != nil {
			return outcome{}, err
		}
		if len(answers) != len(calls) {
			return outcome{}, fmt.Errorf("stage %s answered %d of %d segments", st.Name, len(answers), len(calls))
		}
		for j, a := range answers {
			a.line.Index = calls[j].Index
			lines[at[j]] = &a
		}
	}
	var out []stageLine
	failed := 0
	// Each finish carries the status segs read, so recording them reads
	// no segment item again.
	for i, a := range lines {
		if a == nil {
			continue
		}
		l, from := a.line, segs[i].Status
		out = append(out, l)
		if l.Error != "" {
			failed++
			fins = append(fins, pipeline.SegmentFinish{Index: l.Index, From: from, To: pipeline.SegmentFailed, Result: pipeline.SegmentResult{ResultKey: key, Error: l.Error, Stage: st.Name}})
		} else if sink {
			fins = append(fins, pipeline.SegmentFinish{Index: l.Index, From: from, To: pipeline.SegmentDone, Result: pipeline.SegmentResult{ResultKey: key, Language: a.language, Keywords: a.keywords}})
		}
	}
	if err := store.save(ctx, h, key, out); err != nil {
		return outcome{}, err
	}
	rec := batchRecord(in.Workflow, st, key, cache, lines, at, reused, own)
	if _, err := h.finishBatch(ctx, in.Workflow.WorkflowID, fins, rec); err != nil {
		return outcome{}, storageErr("record segments", err)
	}
	return outcome{message: fmt.Sprintf("batch %d: %d segments, %d answered now, %d reused, %d failed", b.Batch, len(segs), len(calls), reused, failed)}, nil
}

// segmentCalls reads the text of the segments at todo, in parallel. A
// segment without text to work on is not called: idle holds its finish
// (skipped or failed, with the reason) unless an upstream stage failed
// it, which recorded that itself. at maps each call to its position in
// segs.
func (h *handlers) segmentCalls(ctx context.Context, segs []pipeline.Segment, todo []int, view segmentView) (calls []segmentCall, at []int, idle []pipeline.SegmentFinish, err error) {
	type read struct {
		text, reason string
		status       pipeline.SegmentStatus
	}
	reads := make([]read, len(todo))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.parallelism())
	for j, i := range todo {
		g.Go(func() error {
			text, status, reason, err := h.readSegment(gctx, segs[i], view)
			reads[j] = read{text: text, reason: reason, status: status}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, nil, err
	}
	for j, i := range todo {
		r, s := reads[j], segs[i]
		if r.status == "" {
			calls = append(calls, segmentCall{Index: s.Index, Text: r.text})
			at = append(at, i)
			continue
		}
		if _, upstream := view.failed[s.Index]; !upstream {
			idle = append(idle, pipeline.SegmentFinish{Index: s.Index, From: s.Status, To: r.status, Result: pipeline.SegmentResult{Error: r.reason}})
		}
	}
	return calls, at, idle, nil
}

// documentOrBatch routes a stage kind that runs at either scope: a
// payload with a batch goes to the segment handler.
func documentOrBatch(document, segment pipeline.Handler) pipeline.Handler {
	return pipeline.HandlerFunc(func(ctx context.Context, payload []byte) ([]byte, error) {
		var head struct {
			Batch *pipeline.Batch `json:"batch"`
		}
		if json.Unmarshal(payload, &head) == nil && head.Batch != nil {
			return segment.Invoke(ctx, payload)
		}
		return document.Invoke(ctx, payload)
	})
}
