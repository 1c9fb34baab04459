package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/docpipe/docpipe/pipeline/table"
)

// SegmentResult is what finishing a segment records; empty fields are left
// as they are, except Error, which is always replaced.
type SegmentResult struct {
	ResultKey string
	Language  string
	Keywords  []string
	Error     string
}

// PutSegments writes segment items, overwriting pending ones with the same
// index and leaving finished ones alone, in transactions of up to
// table.MaxTransactItems items.
func (r *Repository) PutSegments(ctx context.Context, segs []Segment) error {
	now := FormatTime(r.now())
	byKey := make(map[table.Key]int, len(segs))
	var items []table.Item
	for _, s := range segs {
		if err := validID("workflow", s.WorkflowID); err != nil {
			return err
		}
		if s.Index < 0 || s.Index > 999999 {
			return fmt.Errorf("pipeline: segment index %d out of range", s.Index)
		}
		if s.Status == "" {
			s.Status = SegmentPending
		}
		if s.UpdatedAt == "" {
			s.UpdatedAt = now
		}
		it, err := entityItem(SegmentKey(s.WorkflowID, s.Index), s)
		if err != nil {
			return err
		}
		// A transaction may touch an item once: the last write of a
		// duplicated index wins, as it would with separate puts.
		if i, dup := byKey[it.Key()]; dup {
			items[i] = it
			continue
		}
		byKey[it.Key()] = len(items)
		items = append(items, it)
	}
	// A segment that has left pending is never overwritten: a late
	// duplicate of the step that builds segments must not reset work the
	// analysis already counted.
	cond := table.Or{table.NotExists{Path: table.AttrPK}, table.Equals{Path: pathStatus, Value: string(SegmentPending)}}
	for chunk := range slices.Chunk(items, table.MaxTransactItems) {
		actions := make([]table.TxAction, len(chunk))
		for i, it := range chunk {
			actions[i] = table.TxPut{Item: it, Cond: cond}
		}
		err := r.t.Transact(ctx, actions)
		if errors.Is(err, table.ErrConditionFailed) {
			err = r.putSegmentsOneByOne(ctx, chunk, cond)
		}
		if err != nil {
			return fmt.Errorf("pipeline: put segments: %w", err)
		}
	}
	return nil
}

// putSegmentsOneByOne writes the still-pending or missing segments of a
// chunk in which some segment has already finished.
func (r *Repository) putSegmentsOneByOne(ctx context.Context, items []table.Item, cond table.Cond) error {
	for _, it := range items {
		if err := r.t.Put(ctx, it, cond); err != nil && !errors.Is(err, table.ErrConditionFailed) {
			return err
		}
	}
	return nil
}

// GetSegment reads one segment.
func (r *Repository) GetSegment(ctx context.Context, workflowID string, index int) (Segment, error) {
	var s Segment
	return s, r.get(ctx, SegmentKey(workflowID, index), &s)
}

// ListSegments pages through a workflow's segments in index order.
func (r *Repository) ListSegments(ctx context.Context, workflowID string, limit int, pageToken string) ([]Segment, string, error) {
	return queryPage[Segment](ctx, r.t, table.Query{PK: StepKey(workflowID).PK, SKPrefix: PrefixSegment, Limit: limit, PageToken: pageToken})
}

// FailedSegments returns the segments whose last run failed, in index order.
func (r *Repository) FailedSegments(ctx context.Context, workflowID string) ([]Segment, error) {
	var failed []Segment
	token := ""
	for {
		page, next, err := r.ListSegments(ctx, workflowID, 1000, token)
		if err != nil {
			return nil, err
		}
		for _, s := range page {
			if s.Status == SegmentFailed {
				failed = append(failed, s)
			}
		}
		if next == "" {
			return failed, nil
		}
		token = next
	}
}

// FinishSegment records a segment's outcome and counts it on the step item
// in the same transaction, so each segment is counted exactly once however
// often the call is retried or raced. A pending segment may finish in any
// final state; a failed one may be re-run (its failure is uncounted when
// it now succeeds or is skipped). applied is true when the segment's status
// changed. A segment already done or skipped in to returns applied=false; a
// failed segment failing again has its error and result refreshed, also
// with applied=false (a retry and a failing re-run look alike). A segment in
// another final state gives an error matching ErrStale.
func (r *Repository) FinishSegment(ctx context.Context, workflowID string, index int, to SegmentStatus, patch SegmentResult) (bool, error) {
	if counterPath(to) == "" {
		return false, fmt.Errorf("pipeline: segment cannot finish as %q", to)
	}
	cur, done, err := r.segmentFrom(ctx, workflowID, index, to)
	if err != nil || done {
		return false, err
	}
	applied := false
	what := func() string { return fmt.Sprintf("segment %d of %s", index, workflowID) }
	err = r.retry(ctx, what, func() error {
		err := r.t.Transact(ctx, r.finishActions(workflowID, index, cur, to, patch))
		if err == nil {
			// A failed segment failing again refreshes its record but
			// changes no status and no count.
			applied = cur != to
			return nil
		}
		if !lostRace(err) {
			return fmt.Errorf("pipeline: finish segment %d of %s: %w", index, workflowID, err)
		}
		st, done, err := r.segmentFrom(ctx, workflowID, index, to)
		if err != nil || done {
			return err
		}
		cur = st
		return errLostRace
	})
	return applied, err
}

// segmentFrom reads the state a segment finishes from: pending, or failed
// for a re-run. done is true when it is already in to; a segment in another
// final state gives ErrStale.
func (r *Repository) segmentFrom(ctx context.Context, workflowID string, index int, to SegmentStatus) (SegmentStatus, bool, error) {
	cur, err := r.GetSegment(ctx, workflowID, index)
	if err != nil {
		return "", false, err
	}
	switch cur.Status {
	case SegmentPending, SegmentFailed:
		return cur.Status, false, nil
	case to:
		return "", true, nil
	}
	return "", false, fmt.Errorf("%w: segment %d of %s is %s", ErrStale, index, workflowID, cur.Status)
}

func (r *Repository) finishActions(workflowID string, index int, from, to SegmentStatus, patch SegmentResult) []table.TxAction {
	segUpdates := []table.Update{
		table.Set{Path: pathStatus, Value: string(to)},
		table.Set{Path: pathUpdatedAt, Value: FormatTime(r.now())},
		setOrRemove(pathError, patch.Error),
	}
	if patch.ResultKey != "" {
		segUpdates = append(segUpdates, table.Set{Path: "data.result_key", Value: patch.ResultKey})
	}
	if patch.Language != "" {
		segUpdates = append(segUpdates, table.Set{Path: "data.language", Value: patch.Language})
	}
	if patch.Keywords != nil {
		segUpdates = append(segUpdates, table.Set{Path: "data.keywords", Value: patch.Keywords})
	}
	var counters []table.Update
	switch {
	case from == SegmentPending:
		counters = []table.Update{table.Add{Path: counterPath(to), Delta: 1}}
	case from == SegmentFailed && to != SegmentFailed:
		counters = []table.Update{table.Add{Path: counterPath(SegmentFailed), Delta: -1}, table.Add{Path: counterPath(to), Delta: 1}}
	}
	actions := []table.TxAction{
		table.TxUpdate{Key: SegmentKey(workflowID, index), Updates: segUpdates, Cond: table.Equals{Path: pathStatus, Value: string(from)}},
	}
	if len(counters) > 0 {
		actions = append(actions, table.TxUpdate{Key: StepKey(workflowID), Updates: counters, Cond: table.Exists{Path: table.AttrPK}})
	}
	return actions
}

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
	if !lostRace(err) {
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
