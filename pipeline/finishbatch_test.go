package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/docpipe/docpipe/pipeline/table"
)

// countingTable counts the transactions written through it.
type countingTable struct {
	table.Table
	writes atomic.Int64
}

func (c *countingTable) Transact(ctx context.Context, actions []table.TxAction) error {
	c.writes.Add(1)
	return c.Table.Transact(ctx, actions)
}

func (c *countingTable) Put(ctx context.Context, it table.Item, cond table.Cond) error {
	c.writes.Add(1)
	return c.Table.Put(ctx, it, cond)
}

func (c *countingTable) Update(ctx context.Context, key table.Key, updates []table.Update, cond table.Cond) (table.Item, error) {
	c.writes.Add(1)
	return c.Table.Update(ctx, key, updates, cond)
}

// finishBatchFixture is a workflow with a segment stage "an" and n
// pending segments, on a table that counts writes.
func finishBatchFixture(t *testing.T, n int) (*Repository, *countingTable) {
	t.Helper()
	ct := &countingTable{Table: openSQLite(t)}
	r := batchWorkflow(t, ct, n)
	ct.writes.Store(0)
	return r, ct
}

// batchWorkflow is a repository on tb with a workflow "w" of a segment
// stage "an" and n pending segments.
func batchWorkflow(t *testing.T, tb table.Table, n int) *Repository {
	t.Helper()
	r := NewRepository(tb)
	doc := Document{ProjectID: "p", ID: "d", SHA256: "abc"}
	if err := r.CreateWorkflow(t.Context(), doc, Workflow{ID: "w", ProjectID: "p", DocumentID: "d"}, []Stage{{Name: "an", Scope: ScopeSegment}}); err != nil {
		t.Fatal(err)
	}
	segs := make([]Segment, n)
	for i := range segs {
		segs[i] = Segment{WorkflowID: "w", Index: i + 1, Status: SegmentPending, Source: "text"}
	}
	if err := r.PutSegments(t.Context(), segs); err != nil {
		t.Fatal(err)
	}
	return r
}

// batchOf is the finishes and the record of a batch whose n segments
// the stage ran, each answer offered.
func batchOf(n int) ([]SegmentFinish, BatchRecord) {
	rec := BatchRecord{Stage: "an", StageCounts: StageCounts{Ran: n}}
	var fins []SegmentFinish
	for i := 1; i <= n; i++ {
		fins = append(fins, SegmentFinish{Index: i, From: SegmentPending, To: SegmentDone})
		rec.Offers = append(rec.Offers, CachedOutput{Key: fmt.Sprintf("key-%d", i), Stage: "an", Workflow: WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}, Blob: "b", Index: i})
	}
	return fins, rec
}

// checkBatchRecorded checks that all n finishes, the counts and every
// offer are in the table.
func checkBatchRecorded(t *testing.T, r *Repository, n int) {
	t.Helper()
	ctx := t.Context()
	p, err := r.GetProgress(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if p.SegmentsDone != n || p.Steps["an"].SegmentsRun != n {
		t.Errorf("progress: %d done, stage ran %d; want %d and %d", p.SegmentsDone, p.Steps["an"].SegmentsRun, n, n)
	}
	for i := 1; i <= n; i++ {
		if _, found, err := r.LookupStageCache(ctx, fmt.Sprintf("key-%d", i)); err != nil || !found {
			t.Fatalf("offer %d: found=%v, %v", i, found, err)
		}
	}
}

// A small batch's outcomes, counts and offers are one write; a batch
// whose offers do not fit beside its outcomes records them on their own
// first (250 segments: three writes of offers, one of counts, three of
// outcomes).
func TestABatchRecordRidesOnItsSegmentsOutcomes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ segments, writes int }{{1, 1}, {40, 1}, {60, 3}, {250, 7}} {
		t.Run(fmt.Sprint(c.segments), func(t *testing.T) {
			t.Parallel()
			r, ct := finishBatchFixture(t, c.segments)
			fins, rec := batchOf(c.segments)
			if n, err := r.FinishBatch(t.Context(), "w", fins, rec); err != nil || n != c.segments {
				t.Fatalf("FinishBatch: %d applied, %v", n, err)
			}
			if got := ct.writes.Load(); got != int64(c.writes) {
				t.Errorf("%d writes, want %d", got, c.writes)
			}
			checkBatchRecorded(t, r, c.segments)
		})
	}
}

// A chunk that loses its race (a segment finished meanwhile) settles its
// segments one by one, and the record is still written, once.
func TestABatchRecordSurvivesALostRace(t *testing.T) {
	t.Parallel()
	r, _ := finishBatchFixture(t, 3)
	ctx := t.Context()
	if _, err := r.FinishSegment(ctx, "w", 2, SegmentDone, SegmentResult{}); err != nil {
		t.Fatal(err)
	}
	fins, rec := batchOf(3) // all three read as pending
	if n, err := r.FinishBatch(ctx, "w", fins, rec); err != nil || n != 2 {
		t.Fatalf("FinishBatch: %d applied, %v; want 2", n, err)
	}
	checkBatchRecorded(t, r, 3)
}

// A batch whose answer was lost and resent has recorded its counts once.
func TestABatchRecordSurvivesALostAnswer(t *testing.T) {
	t.Parallel()
	lost := &answerLost{Table: openSQLite(t)}
	r := batchWorkflow(t, lost, 2)
	lost.armed = true
	fins, rec := batchOf(2)
	if n, err := r.FinishBatch(t.Context(), "w", fins, rec); err != nil || n != 2 {
		t.Fatalf("FinishBatch: %d applied, %v; want 2", n, err)
	}
	checkBatchRecorded(t, r, 2)
}

// A completion's cache offers are written with it, in the one write that
// records it: on its own, beside other changes, and with the workflow's
// outcome.
func TestOffersRideOnTheirStepsCompletion(t *testing.T) {
	t.Parallel()
	ct := &countingTable{Table: openSQLite(t)}
	r := NewRepository(ct)
	ctx := t.Context()
	doc := Document{ProjectID: "p", ID: "d", SHA256: "abc"}
	ref := WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}
	if err := r.CreateWorkflow(ctx, doc, Workflow{ID: "w", ProjectID: "p", DocumentID: "d"}, []Stage{{Name: "a"}, {Name: "b"}, {Name: "c"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowPending}, WorkflowInProgress, ""); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"a", "b", "c"} {
		if _, err := r.TransitionSteps(ctx, ref, StepChange{Step: st, From: []StepStatus{StepPending}, To: StepInProgress}); err != nil {
			t.Fatal(err)
		}
	}
	offer := func(key, stage string) []CachedOutput {
		return []CachedOutput{{Key: key, Stage: stage, Workflow: ref, Blob: "blob/" + key}}
	}
	done := func(step string, offers []CachedOutput) StepChange {
		return StepChange{Step: step, Seen: StepInProgress, From: []StepStatus{StepInProgress}, To: StepCompleted, Offers: offers}
	}
	check := func(what string, writes int64, keys ...string) {
		t.Helper()
		if got := ct.writes.Swap(0); got != writes {
			t.Errorf("%s: %d writes, want %d", what, got, writes)
		}
		for _, k := range keys {
			if e, found, err := r.LookupStageCache(ctx, k); err != nil || !found || e.Blob != "blob/"+k {
				t.Errorf("%s: offer %s: found=%v %+v, %v", what, k, found, e, err)
			}
		}
	}
	ct.writes.Store(0)
	if _, err := r.TransitionSteps(ctx, ref, done("a", offer("ka", "a"))); err != nil {
		t.Fatal(err)
	}
	check("one completion", 1, "ka")
	twice := append(offer("kb", "b"), offer("kb", "b")...) // one key twice: stored once
	if _, err := r.TransitionSteps(ctx, ref, done("b", twice), StepChange{Step: "c", Seen: StepInProgress, From: []StepStatus{StepInProgress}, To: StepFailed, Error: "x"}); err != nil {
		t.Fatal(err)
	}
	check("two changes", 1, "kb")
	if _, err := r.TransitionSteps(ctx, ref, StepChange{Step: "c", Seen: StepFailed, From: []StepStatus{StepFailed}, To: StepInProgress}); err != nil {
		t.Fatal(err)
	}
	ct.writes.Store(0)
	if _, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowInProgress}, WorkflowCompleted, "", StatusWithSteps(done("c", offer("kc", "c")))); err != nil {
		t.Fatal(err)
	}
	check("with the outcome", 1, "kc")
}
