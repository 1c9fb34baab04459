package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline/table"
)

// SegmentResult is what finishing a segment records; empty fields are left
// as they are, except Error, which is always replaced.
type SegmentResult struct {
	ResultKey string
	Language  string
	Keywords  []string
	Error     string
	// Stage is the stage that decided the outcome: for a failed
	// segment, the one that failed it.
	Stage string
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
	// The chunks touch different items, so they are written at once: on
	// DynamoDB a 3,000-page document's 30 transactions overlap their
	// round trips, and on SQLite the one writer commits them together.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(putSegmentsAtOnce)
	for chunk := range slices.Chunk(items, table.MaxTransactItems) {
		g.Go(func() error {
			actions := make([]table.TxAction, len(chunk))
			for i, it := range chunk {
				actions[i] = table.TxPut{Item: it, Cond: cond}
			}
			err := r.t.Transact(gctx, actions)
			if errors.Is(err, table.ErrConditionFailed) {
				err = r.putSegmentsOneByOne(gctx, chunk, cond)
			}
			if err != nil {
				return fmt.Errorf("pipeline: put segments: %w", err)
			}
			return nil
		})
	}
	return g.Wait()
}

// putSegmentsAtOnce is how many of PutSegments' transactions are in
// flight at once.
const putSegmentsAtOnce = 8

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

// stepCounters adds deltas (by attribute path) to a workflow's step item
// in the transaction that moves its segments.
func stepCounters(workflowID string, deltas map[string]float64) table.TxUpdate {
	counters := make([]table.Update, 0, len(deltas))
	for path, d := range deltas {
		counters = append(counters, table.Add{Path: path, Delta: d})
	}
	return table.TxUpdate{Key: StepKey(workflowID), Updates: counters, Cond: table.Exists{Path: table.AttrPK}}
}

// EachSegment calls fn with every segment of a workflow, in index order,
// reading them a page at a time; an error from fn stops it.
func (r *Repository) EachSegment(ctx context.Context, workflowID string, fn func(Segment) error) error {
	for token := ""; ; {
		page, next, err := r.ListSegments(ctx, workflowID, 1000, token)
		if err != nil {
			return err
		}
		for _, s := range page {
			if err := fn(s); err != nil {
				return err
			}
		}
		if token = next; token == "" {
			return nil
		}
	}
}

// FailedSegments returns the segments whose last run failed, in index order.
func (r *Repository) FailedSegments(ctx context.Context, workflowID string) ([]Segment, error) {
	var failed []Segment
	err := r.EachSegment(ctx, workflowID, func(s Segment) error {
		if s.Status == SegmentFailed {
			failed = append(failed, s)
		}
		return nil
	})
	return failed, err
}

// segmentRank orders a segment's outcomes within one run. A finish only
// ever moves a segment up this order: a stage may fail a segment a
// sibling stage finished done, but nothing turns failed or skipped into
// done, whichever stage finishes last. Only a re-run moves a failed
// segment back to pending (ResetFailedSegments), and its audit item says
// so. This is the one home of that rule.
func segmentRank(s SegmentStatus) int {
	switch s {
	case SegmentPending:
		return 0
	case SegmentDone:
		return 1
	case SegmentSkipped:
		return 2
	case SegmentFailed:
		return 3
	}
	return -1
}

// segmentMayFinish reports whether a segment in from may finish as to.
func segmentMayFinish(from, to SegmentStatus) bool {
	return segmentRank(from) >= 0 && segmentRank(from) < segmentRank(to)
}

// FinishSegment records a segment's outcome and counts it on the step item
// in the same transaction, so each segment is counted exactly once however
// often the call is retried or raced. The write is conditional on the
// status the segment was read in, which must rank below to
// (segmentRank): a segment already at or above to is left alone and
// applied is false, with no error, so a retry and a sibling's weaker
// outcome are both no-ops. applied is true when the segment's status
// changed.
func (r *Repository) FinishSegment(ctx context.Context, workflowID string, index int, to SegmentStatus, patch SegmentResult) (bool, error) {
	if counterPath(to) == "" {
		return false, fmt.Errorf("pipeline: segment cannot finish as %q", to)
	}
	cur, err := r.segmentFrom(ctx, workflowID, index, to)
	if err != nil || cur == "" {
		return false, err
	}
	applied := false
	finish := NewID()
	what := func() string { return fmt.Sprintf("segment %d of %s", index, workflowID) }
	err = r.retry(ctx, what, func() error {
		err := r.t.Transact(ctx, r.finishActions(workflowID, index, cur, to, patch, finish))
		if err == nil {
			applied = true
			return nil
		}
		if !lostRace(err) {
			return fmt.Errorf("pipeline: finish segment %d of %s: %w", index, workflowID, err)
		}
		if applied, err = r.finishedBy(ctx, workflowID, index, finish); applied || err != nil {
			return err
		}
		st, err := r.segmentFrom(ctx, workflowID, index, to)
		if err != nil || st == "" {
			return err
		}
		cur = st
		return errLostRace
	})
	return applied, err
}

// attrSegmentFinish, on a segment item, names the finish that last moved
// it (a fresh id for each FinishSegment call, one for each chunk of
// FinishSegments), so that a finisher whose answer was lost, and whose
// resent request then failed its own guard, can tell its committed write
// from a racer's.
const attrSegmentFinish = "finish"

// finishedBy reports whether the segment's last finish is finish.
func (r *Repository) finishedBy(ctx context.Context, workflowID string, index int, finish string) (bool, error) {
	it, err := r.t.Get(ctx, SegmentKey(workflowID, index))
	if errors.Is(err, table.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pipeline: read segment %d of %s: %w", index, workflowID, err)
	}
	last, _ := it.Data()[attrSegmentFinish].(string)
	return last == finish, nil
}

// segmentFrom reads the status a segment finishes from, "" when it is
// already at or above to and the finish is a no-op.
func (r *Repository) segmentFrom(ctx context.Context, workflowID string, index int, to SegmentStatus) (SegmentStatus, error) {
	cur, err := r.GetSegment(ctx, workflowID, index)
	if err != nil {
		return "", err
	}
	if !segmentMayFinish(cur.Status, to) {
		return "", nil
	}
	return cur.Status, nil
}

// finishActions moves a segment from from to to, guarded by from, and
// moves its count between the step item's counters; finish names the
// move (attrSegmentFinish).
func (r *Repository) finishActions(workflowID string, index int, from, to SegmentStatus, patch SegmentResult, finish string) []table.TxAction {
	segUpdates := []table.Update{
		table.Set{Path: pathStatus, Value: string(to)},
		table.Set{Path: "data." + attrSegmentFinish, Value: finish},
		table.Set{Path: pathUpdatedAt, Value: FormatTime(r.now())},
		setOrRemove(pathError, patch.Error),
		setOrRemove("data.stage", patch.Stage),
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
	counters := []table.Update{table.Add{Path: counterPath(to), Delta: 1}}
	if from != SegmentPending {
		counters = append(counters, table.Add{Path: counterPath(from), Delta: -1})
	}
	if to == SegmentFailed && patch.Stage != "" {
		counters = append(counters, table.Add{Path: stepPath(patch.Stage, "segments_failed"), Delta: 1})
	}
	return []table.TxAction{
		table.TxUpdate{Key: SegmentKey(workflowID, index), Updates: segUpdates, Cond: table.Equals{Path: pathStatus, Value: string(from)}},
		table.TxUpdate{Key: StepKey(workflowID), Updates: counters, Cond: table.Exists{Path: table.AttrPK}},
	}
}

// ResetFailedSegments moves every failed segment of a workflow back to
// pending for a re-run, uncounting it, with an audit item per segment
// saying so: the one way a failed segment leaves failed. It returns the
// indices it reset.
func (r *Repository) ResetFailedSegments(ctx context.Context, ref WorkflowRef) ([]int, error) {
	failed, err := r.FailedSegments(ctx, ref.WorkflowID)
	if err != nil {
		return nil, err
	}
	var reset []int
	// Two actions a segment plus the step item's counter.
	for chunk := range slices.Chunk(failed, (table.MaxTransactItems-1)/2) {
		now := r.now()
		at := FormatTime(now)
		actions := make([]table.TxAction, 0, 2*len(chunk)+1)
		for _, s := range chunk {
			actions = append(actions, table.TxUpdate{
				Key:     SegmentKey(ref.WorkflowID, s.Index),
				Updates: []table.Update{table.Set{Path: pathStatus, Value: string(SegmentPending)}, table.Set{Path: pathUpdatedAt, Value: at}, table.Remove{Path: pathError}, table.Remove{Path: "data.stage"}},
				Cond:    table.Equals{Path: pathStatus, Value: string(SegmentFailed)},
			})
			tr := Transition{ID: NewIDAt(now), WorkflowID: ref.WorkflowID, Step: SegmentStepName(s.Index), From: StepStatus(SegmentFailed), To: StepStatus(SegmentPending),
				Error: "re-run; it failed with: " + s.Error, At: at}
			actions = append(actions, r.auditPut(tr, now))
		}
		deltas := map[string]float64{counterPath(SegmentFailed): -float64(len(chunk))}
		for _, s := range chunk {
			if s.Stage != "" {
				deltas[stepPath(s.Stage, "segments_failed")]--
			}
		}
		actions = append(actions, stepCounters(ref.WorkflowID, deltas))
		if err := r.t.Transact(ctx, actions); err != nil {
			return reset, fmt.Errorf("pipeline: reset failed segments of %s: %w", ref.WorkflowID, err)
		}
		for _, s := range chunk {
			reset = append(reset, s.Index)
		}
	}
	return reset, nil
}

// SegmentStepName is how a segment's own transitions name it in the audit
// trail.
func SegmentStepName(index int) string { return fmt.Sprintf("segment %d", index) }

// SegmentFinish is one segment's outcome in a FinishSegments call.
type SegmentFinish struct {
	Index  int
	To     SegmentStatus
	Result SegmentResult
	// From is the status the caller read the segment in, "" when it has
	// not. The write is conditional on it either way, so a stale From
	// costs a retry, never a wrong count.
	From SegmentStatus
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
	return r.FinishBatch(ctx, workflowID, fins, BatchRecord{})
}

// BatchRecord is what a segment stage's batch records beside its
// segments' outcomes: the segments it reused, ran and answered as before,
// counted on the stage's step entry (CountStageSegments), and the answers
// it offers to the stage cache (RecordStageCache).
type BatchRecord struct {
	Stage string
	StageCounts
	Offers []CachedOutput
}

func (b BatchRecord) empty() bool { return b.StageCounts.none() && len(b.Offers) == 0 }

// FinishBatch is FinishSegments with rec written in the same transaction
// as the last chunk of outcomes when it fits there, else on its own
// before them: a batch of a small document then costs one write.
func (r *Repository) FinishBatch(ctx context.Context, workflowID string, fins []SegmentFinish, rec BatchRecord) (int, error) {
	if rec.Stage != "" {
		if err := validName("step", rec.Stage); err != nil {
			return 0, err
		}
	}
	alone := func() error {
		if rec.empty() {
			return nil
		}
		if err := r.RecordStageCache(ctx, rec.Offers...); err != nil {
			return err
		}
		return r.CountStageSegments(ctx, workflowID, rec.Stage, rec.StageCounts)
	}
	last := len(fins) % finishChunk
	if last == 0 && len(fins) > 0 {
		last = finishChunk
	}
	if len(fins) == 0 || last+1+len(rec.Offers) > table.MaxTransactItems {
		if err := alone(); err != nil {
			return 0, err
		}
		rec = BatchRecord{}
	}
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
	fins = strongestFinishes(fins)
	status, err := r.statusBefore(ctx, workflowID, fins, lo, hi)
	if err != nil {
		return 0, err
	}
	applied := 0
	for start := 0; start < len(fins); start += finishChunk {
		end := min(start+finishChunk, len(fins))
		var with BatchRecord
		if end == len(fins) {
			with = rec
		}
		n, rode, err := r.finishChunk(ctx, workflowID, fins[start:end], status, with)
		applied += n
		if err == nil && !rode && !with.empty() {
			err = alone()
		}
		if err != nil {
			return applied, err
		}
	}
	return applied, nil
}

// statusBefore is the status each finishing segment is in: the one its
// finish says it was read in when all of them say, else read afresh in
// one range query over lo..hi.
func (r *Repository) statusBefore(ctx context.Context, workflowID string, fins []SegmentFinish, lo, hi int) (map[int]SegmentStatus, error) {
	status := make(map[int]SegmentStatus, len(fins))
	for _, f := range fins {
		if f.From == "" {
			clear(status)
			break
		}
		status[f.Index] = f.From
	}
	if len(status) > 0 {
		return status, nil
	}
	current, err := r.SegmentsInRange(ctx, workflowID, lo, hi)
	if err != nil {
		return nil, err
	}
	for _, s := range current {
		status[s.Index] = s.Status
	}
	return status, nil
}

// strongestFinishes keeps one finish per segment, the highest-ranked, in
// first-seen order: a transaction may touch an item once.
func strongestFinishes(fins []SegmentFinish) []SegmentFinish {
	at := make(map[int]int, len(fins))
	out := make([]SegmentFinish, 0, len(fins))
	for _, f := range fins {
		i, seen := at[f.Index]
		switch {
		case !seen:
			at[f.Index] = len(out)
			out = append(out, f)
		case segmentRank(f.To) > segmentRank(out[i].To):
			out[i] = f
		}
	}
	return out
}

// finishChunk records one chunk's outcomes in one transaction, with rec
// when it is not empty; rode says rec was written with them.
func (r *Repository) finishChunk(ctx context.Context, workflowID string, chunk []SegmentFinish, status map[int]SegmentStatus, rec BatchRecord) (applied int, rode bool, err error) {
	var actions []table.TxAction
	deltas := map[string]float64{}
	var todo []SegmentFinish
	finish := NewID()
	for _, f := range chunk {
		from, ok := status[f.Index]
		if !ok {
			return 0, false, fmt.Errorf("%w: segment %d of %s does not exist", ErrNotFound, f.Index, workflowID)
		}
		if !segmentMayFinish(from, f.To) {
			continue // already recorded (a retry), or outranked (segmentRank)
		}
		acts := r.finishActions(workflowID, f.Index, from, f.To, f.Result, finish)
		actions = append(actions, acts[0])
		for _, u := range acts[1].(table.TxUpdate).Updates {
			add := u.(table.Add)
			deltas[add.Path] += add.Delta
		}
		todo = append(todo, f)
	}
	if len(todo) == 0 {
		return 0, false, nil
	}
	var counters []table.Update
	for path, d := range deltas {
		if d != 0 {
			counters = append(counters, table.Add{Path: path, Delta: d})
		}
	}
	var stepCond table.Cond = table.Exists{Path: table.AttrPK}
	if !rec.empty() {
		puts, err := r.offerPuts(rec.Offers)
		if err != nil {
			return 0, false, err
		}
		actions = append(actions, puts...)
		if counts := stageCountUpdates(rec.Stage, rec.StageCounts); len(counts) > 0 {
			counters = append(counters, counts...)
			stepCond = table.Exists{Path: stepPath(rec.Stage, "status")}
		}
	}
	if len(counters) > 0 {
		actions = append(actions, table.TxUpdate{Key: StepKey(workflowID), Updates: counters, Cond: stepCond})
	}
	err = r.t.Transact(ctx, actions)
	if err == nil {
		return len(todo), true, nil
	}
	if !lostRace(err) {
		return 0, false, fmt.Errorf("pipeline: finish segments of %s: %w", workflowID, err)
	}
	// The chunk is one transaction: its first segment says whether an
	// attempt whose answer was lost committed all of it.
	if mine, err := r.finishedBy(ctx, workflowID, todo[0].Index, finish); mine || err != nil {
		if err != nil {
			return 0, false, err
		}
		return len(todo), true, nil
	}
	// Someone else touched these segments: settle them one by one, each
	// with its own read and guard.
	for _, f := range todo {
		ok, err := r.FinishSegment(ctx, workflowID, f.Index, f.To, f.Result)
		if err != nil {
			return applied, false, err
		}
		if ok {
			applied++
		}
	}
	return applied, false, nil
}
