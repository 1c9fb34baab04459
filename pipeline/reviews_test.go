package pipeline_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
)

// clock is a settable time for due dates.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

func reviewRepo(t *testing.T) (*pipeline.Repository, *clock) {
	t.Helper()
	tb, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	c := &clock{now: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}
	return pipeline.NewRepository(tb, pipeline.WithClock(c.Now)), c
}

func openReview(t *testing.T, repo *pipeline.Repository, wf string, spec pipeline.ReviewSpec) pipeline.Review {
	t.Helper()
	st := pipeline.Stage{Name: "check", Scope: pipeline.ScopeDocument, Run: pipeline.RunSpec{Review: &spec}}
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "d" + wf, WorkflowID: wf}
	v, err := repo.OpenReview(context.Background(), ref, st, pipeline.StepProgress{FileName: wf + ".pdf"}, "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := repo.OpenReview(context.Background(), ref, st, pipeline.StepProgress{}, "")
	if err != nil || again.CreatedAt != v.CreatedAt {
		t.Fatalf("second open: %+v, %v", again, err)
	}
	return v
}

// A due date passing: the review is listed overdue and announced once; past
// its hard limit it escalates once, then times out.
func TestReviewDueDates(t *testing.T) {
	t.Parallel()
	repo, c := reviewRepo(t)
	ctx := context.Background()
	openReview(t, repo, "w1", pipeline.ReviewSpec{Assign: []string{"alice"}, DueSeconds: 3600, HardLimitSeconds: 7200, OnTimeout: pipeline.ReviewEscalate})
	openReview(t, repo, "w2", pipeline.ReviewSpec{Group: "legal", DueSeconds: 3 * 3600})

	overdue := func() []string {
		list, err := repo.ListOverdueReviews(ctx, c.Now())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, v := range list {
			ids = append(ids, v.WorkflowID)
		}
		return ids
	}
	sweep := func() pipeline.ReviewSweep {
		s, err := repo.SweepOverdueReviews(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if ids := overdue(); len(ids) != 0 {
		t.Fatalf("overdue before any due date: %v", ids)
	}
	c.Advance(61 * time.Minute)
	if ids := overdue(); len(ids) != 1 || ids[0] != "w1" {
		t.Fatalf("overdue after an hour: %v", ids)
	}
	if s := sweep(); len(s.Announced) != 1 || len(s.Escalated)+len(s.TimedOut) != 0 {
		t.Fatalf("first sweep: %+v", s)
	}
	if s := sweep(); len(s.Announced)+len(s.Escalated)+len(s.TimedOut) != 0 {
		t.Fatalf("second sweep did something again: %+v", s)
	}
	events, err := repo.ListPendingEvents(ctx, 0)
	if err != nil || len(events) != 1 || events[0].Event.Type != pipeline.EventReviewOverdue || events[0].Event.Review.ID != "w1.check" {
		t.Fatalf("outbox: %+v, %v", events, err)
	}
	mine, err := repo.ListOwnerReviews(ctx, "alice")
	if err != nil || len(mine) != 1 {
		t.Fatalf("alice's reviews: %+v, %v", mine, err)
	}

	c.Advance(time.Hour) // past w1's hard limit: escalated to anyone, due again in an hour
	s := sweep()
	if len(s.Escalated) != 1 || s.Escalated[0].WorkflowID != "w1" || len(s.Escalated[0].Assign) != 0 {
		t.Fatalf("escalation: %+v", s)
	}
	if ids := overdue(); len(ids) != 0 {
		t.Fatalf("overdue after the escalation: %v", ids)
	}
	c.Advance(3 * time.Hour) // past the extended hard limit: no second escalation
	s = sweep()
	if len(s.TimedOut) != 1 || s.TimedOut[0].WorkflowID != "w1" || len(s.Announced) != 1 || s.Announced[0].WorkflowID != "w2" {
		t.Fatalf("timeout: %+v", s)
	}
	decided, err := repo.ListDecidedReviews(ctx)
	if err != nil || len(decided) != 1 || decided[0].State != pipeline.ReviewTimedOut {
		t.Fatalf("decided: %+v, %v", decided, err)
	}
	// w2 has no hard limit: overdue for ever, announced once, never failed.
	if ids := overdue(); len(ids) != 1 || ids[0] != "w2" {
		t.Fatalf("overdue at the end: %v", ids)
	}
}
