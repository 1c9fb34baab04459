package repotest

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

var outboxTests = []struct {
	name string
	fn   func(t *testing.T, tb table.Table, cfg tabletest.Config)
}{
	{"OutboxOutcomeEvents", testOutboxOutcomeEvents},
	{"OutboxNoOutcomeNoEvent", testOutboxNoOutcomeNoEvent},
	{"OutboxNoEventNoOutcome", testOutboxNoEventNoOutcome},
	{"OutboxDeliveredRace", testOutboxDeliveredRace},
	{"OutboxDeadAndRedeliver", testOutboxDeadAndRedeliver},
}

var (
	pendingOnly    = []pipeline.WorkflowStatus{pipeline.WorkflowPending}
	inProgressOnly = []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}
	finished       = []pipeline.WorkflowStatus{pipeline.WorkflowCompleted, pipeline.WorkflowFailed}
)

func setStatus(t *testing.T, repo *pipeline.Repository, f fixture, from []pipeline.WorkflowStatus, to pipeline.WorkflowStatus, msg string) {
	t.Helper()
	if ok, err := repo.SetWorkflowStatus(t.Context(), f.ref, from, to, msg); !ok || err != nil {
		t.Fatalf("SetWorkflowStatus %v→%s: applied=%v err=%v", from, to, ok, err)
	}
}

func workflowEvents(t *testing.T, repo *pipeline.Repository, wfID string) []pipeline.OutboxEntry {
	t.Helper()
	evs, err := repo.ListWorkflowEvents(t.Context(), wfID)
	if err != nil {
		t.Fatalf("ListWorkflowEvents: %v", err)
	}
	return evs
}

// pendingIDs lists the pending index, keeping only the events of wfID.
func pendingIDs(t *testing.T, repo *pipeline.Repository, wfID string, dead bool) []string {
	t.Helper()
	list := repo.ListPendingEvents
	if dead {
		list = repo.ListDeadEvents
	}
	evs, err := list(t.Context(), 0)
	if err != nil {
		t.Fatalf("list outbox: %v", err)
	}
	var ids []string
	for _, e := range evs {
		if e.Event.WorkflowID == wfID {
			ids = append(ids, e.Event.ID)
		}
	}
	return ids
}

// testOutboxOutcomeEvents: completing, failing and re-running a workflow
// each write one pending event with the outcome's facts; starting it and
// repeating a change that already committed write none.
func testOutboxOutcomeEvents(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	total := 3
	if err := repo.UpdateWorkflowInfo(ctx, f.ref, pipeline.WorkflowInfo{TotalSegments: &total}); err != nil {
		t.Fatal(err)
	}
	setStatus(t, repo, f, pendingOnly, pipeline.WorkflowInProgress, "")
	if evs := workflowEvents(t, repo, f.wf.ID); len(evs) != 0 {
		t.Fatalf("starting a workflow wrote events: %+v", evs)
	}
	setStatus(t, repo, f, inProgressOnly, pipeline.WorkflowFailed, "boom")
	setStatus(t, repo, f, finished, pipeline.WorkflowInProgress, "")
	setStatus(t, repo, f, inProgressOnly, pipeline.WorkflowCompleted, "")
	if ok, err := repo.SetWorkflowStatus(ctx, f.ref, inProgressOnly, pipeline.WorkflowCompleted, ""); ok || err != nil {
		t.Fatalf("repeated completion: applied=%v err=%v, want a no-op", ok, err)
	}

	evs := workflowEvents(t, repo, f.wf.ID)
	var types []pipeline.EventType
	var ids []string
	for _, e := range evs {
		types = append(types, e.Event.Type)
		ids = append(ids, e.Event.ID)
		if e.Delivery.State != pipeline.DeliveryPending || e.Delivery.Attempts != 0 {
			t.Errorf("new event %s delivery = %+v", e.Event.ID, e.Delivery)
		}
		ev := e.Event
		if ev.WorkflowID != f.wf.ID || ev.ProjectID != f.doc.ProjectID || ev.Document.ID != f.doc.ID ||
			ev.Document.FileName != f.doc.FileName || ev.Segments.Total != total || ev.Time.IsZero() {
			t.Errorf("event %+v does not describe workflow %s", ev, f.wf.ID)
		}
	}
	tabletest.WantEqual(t, "event types", types, []pipeline.EventType{pipeline.EventFailed, pipeline.EventRerunStarted, pipeline.EventCompleted})
	if evs[0].Event.Error != "boom" || evs[0].Event.Results != nil {
		t.Errorf("failed event = %+v, want error boom and no results", evs[0].Event)
	}
	res := evs[2].Event.Results
	if res == nil || res.SummaryKey != pipeline.SummaryBlobKey(f.ref) || res.GraphKey != pipeline.GraphBlobKey(f.ref) {
		t.Errorf("completed event results = %+v", res)
	}
	tabletest.WantEqual(t, "pending index (oldest first)", pendingIDs(t, repo, f.wf.ID, false), ids)
}

// testOutboxNoOutcomeNoEvent: a status change whose condition fails writes
// no event.
func testOutboxNoOutcomeNoEvent(t *testing.T, tb table.Table, _ tabletest.Config) {
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	setStatus(t, repo, f, pendingOnly, pipeline.WorkflowInProgress, "")
	setStatus(t, repo, f, inProgressOnly, pipeline.WorkflowCompleted, "")
	ok, err := repo.SetWorkflowStatus(t.Context(), f.ref, inProgressOnly, pipeline.WorkflowFailed, "late")
	wantStale(t, "fail a completed workflow", ok, err)
	evs := workflowEvents(t, repo, f.wf.ID)
	if len(evs) != 1 || evs[0].Event.Type != pipeline.EventCompleted {
		t.Fatalf("events = %+v, want only the completion", evs)
	}
}

// testOutboxNoEventNoOutcome: when the outbox put fails (its id is taken),
// the outcome is not recorded either.
func testOutboxNoEventNoOutcome(t *testing.T, tb table.Table, _ tabletest.Config) {
	taken := pipeline.NewID()
	repo := pipeline.NewRepository(tb, pipeline.WithEventIDs(func(time.Time) string { return taken }))
	f := setup(t, repo)
	setStatus(t, repo, f, pendingOnly, pipeline.WorkflowInProgress, "")
	tabletest.MustPut(t, tb, table.Item{table.AttrPK: pipeline.EventKey(f.wf.ID, taken).PK, table.AttrSK: pipeline.EventKey(f.wf.ID, taken).SK})

	ok, err := repo.SetWorkflowStatus(t.Context(), f.ref, inProgressOnly, pipeline.WorkflowCompleted, "")
	if ok || !errors.Is(err, pipeline.ErrEventIDTaken) {
		t.Fatalf("complete with a failing outbox put: applied=%v err=%v, want ErrEventIDTaken", ok, err)
	}
	if p := progress(t, repo, f.wf.ID); p.Status != pipeline.WorkflowInProgress {
		t.Fatalf("outcome recorded without its event: step item is %s", p.Status)
	}
	wf, err := repo.GetWorkflow(t.Context(), f.doc.ID, f.wf.ID)
	if err != nil || wf.Status != pipeline.WorkflowInProgress {
		t.Fatalf("workflow = %s, %v; want in_progress", wf.Status, err)
	}
}

// testOutboxDeliveredRace: relays racing to mark one event delivered:
// exactly one wins; the event leaves the index and gets a ttl.
func testOutboxDeliveredRace(t *testing.T, tb table.Table, cfg tabletest.Config) {
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	setStatus(t, repo, f, pendingOnly, pipeline.WorkflowFailed, "x")
	ev := workflowEvents(t, repo, f.wf.ID)[0].Event
	var won atomic.Int64
	cfg.Race(cfg.Racers, func(int) {
		ok, err := repo.MarkEventDelivered(t.Context(), f.wf.ID, ev.ID, 1)
		if err != nil {
			t.Errorf("MarkEventDelivered: %v", err)
		}
		if ok {
			won.Add(1)
		}
	})
	if won.Load() != 1 {
		t.Fatalf("%d relays: %d marked the event delivered, want 1", cfg.Racers, won.Load())
	}
	it := tabletest.MustGet(t, tb, pipeline.EventKey(f.wf.ID, ev.ID))
	if _, has := it[table.AttrGSI1PK]; has {
		t.Fatalf("delivered event keeps its index key: %v", it)
	}
	if ttl, _ := it[table.AttrTTL].(float64); ttl < float64(time.Now().Add(pipeline.DeliveredEventTTL-time.Hour).Unix()) {
		t.Fatalf("delivered event ttl = %v", it[table.AttrTTL])
	}
	got, err := repo.GetEvent(t.Context(), f.wf.ID, ev.ID)
	if err != nil || got.Delivery.State != pipeline.DeliveryDelivered || got.Delivery.DeliveredAt == "" || got.Event.ID != ev.ID {
		t.Fatalf("GetEvent = %+v, %v", got, err)
	}
	if ids := pendingIDs(t, repo, f.wf.ID, false); len(ids) != 0 {
		t.Fatalf("delivered event still pending: %v", ids)
	}
	ok, err := repo.MarkEventDead(t.Context(), f.wf.ID, ev.ID, 9, "late")
	wantStale(t, "bury a delivered event", ok, err)
}

// testOutboxDeadAndRedeliver: failures are recorded, a dead event keeps its
// data in the dead index, and redelivery makes it pending again.
func testOutboxDeadAndRedeliver(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	setStatus(t, repo, f, pendingOnly, pipeline.WorkflowFailed, "x")
	ev := workflowEvents(t, repo, f.wf.ID)[0].Event
	next := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := repo.RecordEventFailure(ctx, f.wf.ID, ev.ID, 1, "HTTP 500", next); err != nil {
		t.Fatal(err)
	}
	got, err := repo.GetEvent(ctx, f.wf.ID, ev.ID)
	if err != nil || got.Delivery.State != pipeline.DeliveryPending || got.Delivery.Attempts != 1 ||
		got.Delivery.LastError != "HTTP 500" || got.Delivery.NextAttemptAt != pipeline.FormatTime(next) {
		t.Fatalf("after a failure: %+v, %v", got.Delivery, err)
	}
	if ok, err := repo.MarkEventDead(ctx, f.wf.ID, ev.ID, 5, "HTTP 500"); !ok || err != nil {
		t.Fatalf("MarkEventDead: %v, %v", ok, err)
	}
	if ok, err := repo.MarkEventDead(ctx, f.wf.ID, ev.ID, 5, "HTTP 500"); ok || err != nil {
		t.Fatalf("repeated MarkEventDead: %v, %v; want a no-op", ok, err)
	}
	if ids := pendingIDs(t, repo, f.wf.ID, false); len(ids) != 0 {
		t.Fatalf("dead event still pending: %v", ids)
	}
	tabletest.WantEqual(t, "dead index", pendingIDs(t, repo, f.wf.ID, true), []string{ev.ID})
	dead, err := repo.FindDeadEvent(ctx, ev.ID)
	if err != nil || dead.Event.ID != ev.ID || dead.Event.Error != "x" || dead.Delivery.Attempts != 5 {
		t.Fatalf("FindDeadEvent = %+v, %v", dead, err)
	}
	if _, err := repo.FindDeadEvent(ctx, pipeline.NewID()); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("FindDeadEvent(unknown) = %v, want ErrNotFound", err)
	}

	if err := repo.RedeliverEvent(ctx, f.wf.ID, ev.ID); err != nil {
		t.Fatalf("RedeliverEvent: %v", err)
	}
	tabletest.WantEqual(t, "pending after redeliver", pendingIDs(t, repo, f.wf.ID, false), []string{ev.ID})
	if ids := pendingIDs(t, repo, f.wf.ID, true); len(ids) != 0 {
		t.Fatalf("redelivered event still dead: %v", ids)
	}
	if err := repo.RedeliverEvent(ctx, f.wf.ID, ev.ID); !errors.Is(err, pipeline.ErrStale) {
		t.Fatalf("redeliver a pending event = %v, want ErrStale", err)
	}
	if ok, err := repo.MarkEventDelivered(ctx, f.wf.ID, ev.ID, 1); !ok || err != nil {
		t.Fatalf("deliver after redeliver: %v, %v", ok, err)
	}
	if st := mustEvent(t, repo, f.wf.ID, ev.ID).Delivery.State; st != pipeline.DeliveryDelivered {
		t.Fatalf("event is %s after delivery", st)
	}
}

func mustEvent(t *testing.T, repo *pipeline.Repository, wfID, id string) pipeline.OutboxEntry {
	t.Helper()
	e, err := repo.GetEvent(t.Context(), wfID, id)
	if err != nil {
		t.Fatalf("GetEvent: %v", err)
	}
	return e
}
