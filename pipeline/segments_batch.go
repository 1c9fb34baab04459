package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/table"
)

// SegmentFinish is one segment's outcome in a FinishSegments call.
type SegmentFinish struct {
	Index  int
	To     SegmentStatus
	Result SegmentResult
}

// finishChunk leaves room for the step item's counter update in a
// transaction of at most table.MaxTransactItems actions.
const finishChunk = table.MaxTransactItems - 1

// SegmentsInRange reads segments from..to (inclusive) in index order: one
// range query.
func (r *Repository) SegmentsInRange(ctx context.Context, workflowID string, from, to int) ([]Segment, error) {
	items, err := queryAll(ctx, r.t, table.Query{PK: StepKey(workflowID).PK, SKFrom: SegmentSK(from), SKTo: SegmentSK(to)})
	if err != nil {
		return nil, err
	}
	return decodeAll[Segment](items)
}

// FinishSegments records the outcomes of a batch of segments with one
// transaction per chunk of up to 99 segments: the segment updates, each
// guarded by the status it was read in, plus one update adding the chunk's
// totals to the step item's counters. That keeps writes near one request
// per hundred segments and leaves the hot step item one update per chunk
// instead of one per segment. Segments already in their target state are
// left alone, so a retried batch counts nothing twice; a chunk that loses a
// race falls back to FinishSegment one segment at a time.
func (r *Repository) FinishSegments(ctx context.Context, workflowID string, fins []SegmentFinish) (int, error) {
	if len(fins) == 0 {
		return 0, nil
	}
	lo, hi := fins[0].Index, fins[0].Index
	for _, f := range fins {
		if counterPath(f.To) == "" {
			return 0, fmt.Errorf("pipeline: segment cannot finish as %q", f.To)
		}
		lo, hi = min(lo, f.Index), max(hi, f.Index)
	}
	current, err := r.SegmentsInRange(ctx, workflowID, lo, hi)
	if err != nil {
		return 0, err
	}
	status := make(map[int]SegmentStatus, len(current))
	for _, s := range current {
		status[s.Index] = s.Status
	}
	applied := 0
	for start := 0; start < len(fins); start += finishChunk {
		chunk := fins[start:min(start+finishChunk, len(fins))]
		n, err := r.finishChunk(ctx, workflowID, chunk, status)
		applied += n
		if err != nil {
			return applied, err
		}
	}
	return applied, nil
}

func (r *Repository) finishChunk(ctx context.Context, workflowID string, chunk []SegmentFinish, status map[int]SegmentStatus) (int, error) {
	var actions []table.TxAction
	deltas := map[string]float64{}
	var todo []SegmentFinish
	for _, f := range chunk {
		from, ok := status[f.Index]
		if !ok {
			return 0, fmt.Errorf("%w: segment %d of %s does not exist", ErrNotFound, f.Index, workflowID)
		}
		if from == f.To || (from != SegmentPending && from != SegmentFailed) {
			continue // already recorded (a retry) or finished otherwise
		}
		acts := r.finishActions(workflowID, f.Index, from, f.To, f.Result)
		actions = append(actions, acts[0])
		if len(acts) > 1 {
			for _, u := range acts[1].(table.TxUpdate).Updates {
				add := u.(table.Add)
				deltas[add.Path] += add.Delta
			}
		}
		todo = append(todo, f)
	}
	if len(todo) == 0 {
		return 0, nil
	}
	var counters []table.Update
	for path, d := range deltas {
		if d != 0 {
			counters = append(counters, table.Add{Path: path, Delta: d})
		}
	}
	if len(counters) > 0 {
		actions = append(actions, table.TxUpdate{Key: StepKey(workflowID), Updates: counters, Cond: table.Exists{Path: table.AttrPK}})
	}
	err := r.t.Transact(ctx, actions)
	if err == nil {
		return len(todo), nil
	}
	if !errors.Is(err, table.ErrConditionFailed) && !errors.Is(err, table.ErrTransactionConflict) {
		return 0, fmt.Errorf("pipeline: finish segments of %s: %w", workflowID, err)
	}
	// Someone else touched these segments: settle them one by one, each
	// with its own read and guard.
	applied := 0
	for _, f := range todo {
		ok, err := r.FinishSegment(ctx, workflowID, f.Index, f.To, f.Result)
		if err != nil && !errors.Is(err, ErrStale) {
			return applied, err
		}
		if ok {
			applied++
		}
	}
	return applied, nil
}

// ListDocumentWorkflows returns a document's workflows, newest first.
func (r *Repository) ListDocumentWorkflows(ctx context.Context, documentID string) ([]Workflow, error) {
	items, err := queryAll(ctx, r.t, table.Query{PK: PrefixDocument + documentID, SKPrefix: PrefixWorkflow, Reverse: true})
	if err != nil {
		return nil, err
	}
	return decodeAll[Workflow](items)
}
