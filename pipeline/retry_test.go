package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

func TestBackoffIsJitteredAndCapped(t *testing.T) {
	t.Parallel()
	for n := range 12 {
		base := time.Duration(1<<min(n, 6)) * time.Millisecond
		for range 50 {
			if d := backoff(n); d < base/2 || d >= base*3/2 {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v)", n, d, base/2, base*3/2)
			}
		}
	}
}

// recordSleeps makes a repository's retries wait for nothing and records
// how long they would have waited.
func recordSleeps(r *Repository) *[]time.Duration {
	var waits []time.Duration
	r.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return &waits
}

func TestRetryGivesUpAsConflict(t *testing.T) {
	t.Parallel()
	r := NewRepository(nil)
	waits := recordSleeps(r)
	calls := 0
	err := r.retry(t.Context(), func() string { return "thing x" }, func() error { calls++; return errLostRace })
	if !errors.Is(err, table.ErrTransactionConflict) || !strings.Contains(err.Error(), "thing x keeps changing") {
		t.Fatalf("err = %v, want a conflict naming the write", err)
	}
	if calls != maxAttempts || len(*waits) != maxAttempts-1 {
		t.Fatalf("%d attempts, %d waits; want %d and %d", calls, len(*waits), maxAttempts, maxAttempts-1)
	}
}

func TestRetryStopsOnOtherErrorsAndCancellation(t *testing.T) {
	t.Parallel()
	r := NewRepository(nil)
	recordSleeps(r)
	boom := errors.New("boom")
	calls := 0
	if err := r.retry(t.Context(), nil, func() error { calls++; return boom }); err != boom || calls != 1 {
		t.Fatalf("err = %v after %d calls, want boom after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls = 0
	if err := r.retry(ctx, nil, func() error { calls++; return errLostRace }); !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("err = %v after %d calls, want context.Canceled after 1", err, calls)
	}
}

// openSQLite opens a table in a fresh file, closed when the test ends.
func openSQLite(t *testing.T) table.Table {
	t.Helper()
	tb, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// conflicting fails the first n transactions as a DynamoDB transaction
// conflict would.
type conflicting struct {
	table.Table
	n int
}

func (c *conflicting) Transact(ctx context.Context, actions []table.TxAction) error {
	if c.n > 0 {
		c.n--
		return table.ErrTransactionConflict
	}
	return c.Table.Transact(ctx, actions)
}

// Every optimistic write backs off the same way between tries.
func TestWritesBackOffOnConflicts(t *testing.T) {
	t.Parallel()
	tb := openSQLite(t)
	ct := &conflicting{Table: tb}
	r := NewRepository(ct)
	waits := recordSleeps(r)
	ctx := t.Context()
	doc := Document{ProjectID: "p", ID: "d", SHA256: "abc"}
	wf := Workflow{ID: "w", ProjectID: "p", DocumentID: "d"}
	ref := WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}
	stage := "parse"
	for _, w := range []struct {
		name  string
		write func() error
	}{
		{"create workflow", func() error { return r.CreateWorkflow(ctx, doc, wf, []Stage{{Name: stage}}) }},
		{"transition step", func() error {
			_, err := r.TransitionSteps(ctx, ref, StepChange{Step: stage, From: []StepStatus{StepPending}, To: StepInProgress})
			return err
		}},
		{"set workflow status", func() error {
			_, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowPending}, WorkflowInProgress, "")
			return err
		}},
		{"finish segment", func() error {
			_, err := r.FinishSegment(ctx, "w", 1, SegmentDone, SegmentResult{})
			return err
		}},
	} {
		if w.name == "finish segment" {
			if err := r.PutSegments(ctx, []Segment{{WorkflowID: "w", Index: 1}}); err != nil {
				t.Fatal(err)
			}
		}
		*waits = nil
		ct.n = 2
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if len(*waits) != 2 || (*waits)[0] >= 3*time.Millisecond/2 || (*waits)[1] < time.Millisecond {
			t.Errorf("%s waited %v, want two growing backoffs", w.name, *waits)
		}
	}
	p, err := r.GetProgress(ctx, "w")
	if err != nil || p.Steps[stage].Status != StepInProgress || p.Status != WorkflowInProgress || p.SegmentsDone != 1 {
		t.Fatalf("progress after the writes = %+v, %v", p, err)
	}
}

// repoLosingAnswers is a repository on SQLite behind answerLost, holding
// workflow w of document d (project p) with one stage, parse.
func repoLosingAnswers(t *testing.T) (*Repository, *answerLost) {
	t.Helper()
	lost := &answerLost{Table: openSQLite(t)}
	r := NewRepository(lost)
	doc := Document{ProjectID: "p", ID: "d", SHA256: "abc"}
	if err := r.CreateWorkflow(t.Context(), doc, Workflow{ID: "w", ProjectID: "p", DocumentID: "d"}, []Stage{{Name: "parse"}}); err != nil {
		t.Fatal(err)
	}
	return r, lost
}

// answerLost applies the next transaction and then sends it again, as the
// SDK does when a response is lost: the table answers the resent one.
type answerLost struct {
	table.Table
	armed bool
}

func (a *answerLost) Transact(ctx context.Context, actions []table.TxAction) error {
	if !a.armed {
		return a.Table.Transact(ctx, actions)
	}
	a.armed = false
	if err := a.Table.Transact(ctx, actions); err != nil {
		return err
	}
	return a.Table.Transact(ctx, actions)
}

// A workflow's outcome written with its last step's completion, whose
// answer was lost and whose resend fails its conditions against that very
// write, has succeeded: the caller must not read it as a lost race.
func TestOutcomeWithStepsSurvivesALostAnswer(t *testing.T) {
	t.Parallel()
	r, lost := repoLosingAnswers(t)
	ctx := t.Context()
	ref := WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}
	lost.armed = true
	if applied, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowPending}, WorkflowInProgress, ""); err != nil || !applied {
		t.Fatalf("start whose answer was lost: applied=%v, %v; want applied", applied, err)
	}
	if _, err := r.TransitionSteps(ctx, ref, StepChange{Step: "parse", From: []StepStatus{StepPending}, To: StepInProgress}); err != nil {
		t.Fatal(err)
	}
	lost.armed = true
	done := StepChange{Step: "parse", Seen: StepInProgress, From: []StepStatus{StepInProgress}, To: StepCompleted}
	if applied, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowInProgress}, WorkflowCompleted, "", StatusWithSteps(done)); err != nil || !applied {
		t.Fatalf("outcome whose answer was lost: applied=%v, %v; want applied", applied, err)
	}
	// Another writer's change that is already so is not this one's.
	if applied, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowInProgress}, WorkflowCompleted, ""); err != nil || applied {
		t.Fatalf("a completion already made = applied %v, %v; want not applied", applied, err)
	}
	p, err := r.GetProgress(ctx, "w")
	if err != nil || p.Status != WorkflowCompleted || p.Steps["parse"].Status != StepCompleted {
		t.Fatalf("progress = %+v, %v", p, err)
	}
	// A change that really lost its race still says so.
	failed := StepChange{Step: "parse", Seen: StepInProgress, From: []StepStatus{StepInProgress}, To: StepFailed}
	if _, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowInProgress}, WorkflowFailed, "late", StatusWithSteps(failed)); !errors.Is(err, ErrStale) {
		t.Fatalf("a late failure of a completed workflow = %v, want ErrStale", err)
	}
}

// A new pipeline version whose answer was lost is still reported new: the
// apply knows its own write when it reads it back.
func TestApplyPipelineSurvivesALostAnswer(t *testing.T) {
	t.Parallel()
	tb := openSQLite(t)
	lost := &answerLost{Table: tb, armed: true}
	r := NewRepository(lost)
	def := Definition{Name: "p", Stages: []Stage{{Name: "parse"}}}
	if v, created, err := r.ApplyPipeline(t.Context(), def); err != nil || v != 1 || !created {
		t.Fatalf("apply whose answer was lost = %d, %v, %v; want 1, true", v, created, err)
	}
	if v, created, err := r.ApplyPipeline(t.Context(), def); err != nil || v != 1 || created {
		t.Fatalf("the same definition again = %d, %v, %v; want 1, false", v, created, err)
	}
}

// A segment's finish whose answer was lost, and whose resend fails its
// guard against that very write, has been applied: alone and in a batch,
// and counted once. A finish another call made is still not this one's.
func TestSegmentFinishesSurviveALostAnswer(t *testing.T) {
	t.Parallel()
	r, lost := repoLosingAnswers(t)
	ctx := t.Context()
	segs := make([]Segment, 4)
	for i := range segs {
		segs[i] = Segment{WorkflowID: "w", Index: i + 1, Status: SegmentPending, Source: "text"}
	}
	if err := r.PutSegments(ctx, segs); err != nil {
		t.Fatal(err)
	}
	lost.armed = true
	if applied, err := r.FinishSegment(ctx, "w", 1, SegmentDone, SegmentResult{Language: "en"}); err != nil || !applied {
		t.Fatalf("a finish whose answer was lost: applied=%v, %v; want applied", applied, err)
	}
	if applied, err := r.FinishSegment(ctx, "w", 1, SegmentDone, SegmentResult{Language: "en"}); err != nil || applied {
		t.Fatalf("the same finish again: applied=%v, %v; want not applied", applied, err)
	}
	lost.armed = true
	fins := []SegmentFinish{{Index: 2, To: SegmentDone}, {Index: 3, To: SegmentFailed, Result: SegmentResult{Error: "bad"}}}
	if n, err := r.FinishSegments(ctx, "w", fins); err != nil || n != 2 {
		t.Fatalf("a batch whose answer was lost: %d applied, %v; want 2", n, err)
	}
	p, err := r.GetProgress(ctx, "w")
	if err != nil || p.SegmentsDone != 2 || p.SegmentsFailed != 1 {
		t.Fatalf("progress = done %d failed %d, %v; want 2 and 1", p.SegmentsDone, p.SegmentsFailed, err)
	}
}
