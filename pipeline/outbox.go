package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// The outbox: every outcome a workflow records (completed, failed, a
// re-run started) writes an EVENT# item in the same transaction, so there
// is never an outcome without its announcement nor an announcement of an
// outcome that did not happen. A relay delivers pending items afterwards
// and marks them delivered; until then they sit in GSI1 under
// OUTBOX#PENDING#<shard>, ordered by their ULID.

// EventType names what happened.
type EventType string

const (
	EventCompleted    EventType = "analysis.completed"
	EventFailed       EventType = "analysis.failed"
	EventRerunStarted EventType = "analysis.rerun_started"
	// EventReviewOverdue: a review passed its due date undecided (once
	// per due date).
	EventReviewOverdue EventType = "review.overdue"
	// EventBackfillCompleted summarises a finished backfill (its
	// workflows announce themselves as usual).
	EventBackfillCompleted EventType = "backfill.completed"
)

// DeliveryState is where an outbox item is on its way to the sinks.
type DeliveryState string

const (
	DeliveryPending   DeliveryState = "pending"
	DeliveryDelivered DeliveryState = "delivered"
	DeliveryDead      DeliveryState = "dead" // out of attempts; kept until redelivered
)

// DeliveredEventTTL is how long a delivered outbox item stays readable.
const DeliveredEventTTL = 7 * 24 * time.Hour

// Event is what sinks receive, as JSON.
type Event struct {
	ID         string         `json:"id"` // ULID; receivers dedupe by it
	Type       EventType      `json:"type"`
	Time       time.Time      `json:"time"`
	ProjectID  string         `json:"project_id"`
	Document   EventDocument  `json:"document"`
	WorkflowID string         `json:"workflow_id"`
	Pipeline   *EventPipeline `json:"pipeline,omitempty"`
	Segments   EventSegments  `json:"segments"`
	Results    *EventResults  `json:"results,omitempty"`
	Error      string         `json:"error,omitempty"`
	Review     *EventReview   `json:"review,omitempty"` // review events only
	// Backfill summarises a backfill (backfill.completed only); its
	// WorkflowID is then the backfill's id, under which the event is kept.
	Backfill *EventBackfill `json:"backfill,omitempty"`
}

// EventBackfill is what a finished backfill did.
type EventBackfill struct {
	ID        string `json:"id"`
	Documents int    `json:"documents"`
	Completed int    `json:"completed"`
	Failed    int    `json:"failed"`
	// StagesRun and StagesReused count the stage runs over every document
	// (a segment stage counts once per document).
	StagesRun    int     `json:"stages_run"`
	StagesReused int     `json:"stages_reused"`
	Seconds      float64 `json:"seconds"`
}

// EventDocument names the analysed document.
type EventDocument struct {
	ID       string `json:"id"`
	FileName string `json:"file_name"`
}

// EventPipeline is the pipeline a workflow ran, when it records one.
type EventPipeline struct {
	Name    string `json:"name"`
	Version int    `json:"version,omitempty"`
}

// EventSegments are the workflow's segment counters at the outcome.
type EventSegments struct {
	Total   int `json:"total"`
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// EventResults locates a completed workflow's results: blob keys, and URIs
// (file:// or s3://) that a relay fills in from the blob store it serves.
type EventResults struct {
	SummaryKey string `json:"summary_key"`
	GraphKey   string `json:"graph_key"`
	SummaryURI string `json:"summary_uri,omitempty"`
	GraphURI   string `json:"graph_uri,omitempty"`
}

// EventDelivery is an outbox item's delivery bookkeeping.
type EventDelivery struct {
	State         DeliveryState `json:"state"`
	Attempts      int           `json:"attempts"`
	LastError     string        `json:"last_error,omitempty"`
	NextAttemptAt string        `json:"next_attempt_at,omitempty"` // FormatTime; "" means now
	DeliveredAt   string        `json:"delivered_at,omitempty"`
}

// OutboxEntry is one stored outbox item: the event and its delivery state.
type OutboxEntry struct {
	Event    Event         `json:"event"`
	Delivery EventDelivery `json:"delivery"`
}

// Attribute paths of an outbox item.
const (
	pathDeliveryState    = "data.delivery.state"
	pathDeliveryAttempts = "data.delivery.attempts"
	pathDeliveryError    = "data.delivery.last_error"
	pathDeliveryNext     = "data.delivery.next_attempt_at"
	pathDeliveredAt      = "data.delivery.delivered_at"
)

// ErrEventIDTaken: the outbox item of an outcome could not be written
// because its id is in use, so neither was the outcome.
var ErrEventIDTaken = fmt.Errorf("pipeline: event id taken: %w", table.ErrConditionFailed)

// WithEventIDs replaces the generator of event ids (NewID by default).
// Tests use it to collide on purpose.
func WithEventIDs(gen func(time.Time) string) RepositoryOption {
	return func(r *Repository) { r.eventID = gen }
}

// outcomeEventType is the event a status change announces, if any.
func outcomeEventType(from []WorkflowStatus, to WorkflowStatus) (EventType, bool) {
	switch to {
	case WorkflowCompleted:
		return EventCompleted, true
	case WorkflowFailed:
		return EventFailed, true
	case WorkflowInProgress:
		// Out of a finished state only: that is a re-run.
		rerun := !slices.ContainsFunc(from, func(s WorkflowStatus) bool {
			return s == WorkflowPending || s == WorkflowInProgress || s == WorkflowWaitingReview
		})
		if rerun {
			return EventRerunStarted, true
		}
	}
	return "", false
}

// outcomeEvent builds the outbox item announcing a status change, or nil
// when the change announces nothing. It reads the workflow item (for the
// file name and pipeline) and the step item (for the counters).
func (r *Repository) outcomeEvent(ctx context.Context, ref WorkflowRef, from []WorkflowStatus, to WorkflowStatus, errMsg string, progress func() (StepProgress, error)) (table.Item, error) {
	typ, ok := outcomeEventType(from, to)
	if !ok {
		return nil, nil
	}
	prog, err := progress()
	if err != nil {
		return nil, err
	}
	wfItem, err := r.t.Get(ctx, WorkflowKey(ref.DocumentID, ref.WorkflowID))
	if err != nil {
		return nil, fmt.Errorf("pipeline: get workflow %s: %w", ref.WorkflowID, err)
	}
	now := r.now().UTC()
	ev := Event{
		ID:         r.eventID(now),
		Type:       typ,
		Time:       now,
		ProjectID:  ref.ProjectID,
		Document:   EventDocument{ID: ref.DocumentID, FileName: prog.FileName},
		WorkflowID: ref.WorkflowID,
		Pipeline:   workflowPipeline(wfItem.Data()),
		Segments: EventSegments{
			Total: prog.TotalSegments, Done: prog.SegmentsDone,
			Failed: prog.SegmentsFailed, Skipped: prog.SegmentsSkipped,
		},
		Error: errMsg,
	}
	if typ == EventCompleted {
		ev.Results = &EventResults{SummaryKey: prog.OutputBlobKey(ref, SummaryBlobKey(ref)), GraphKey: prog.OutputBlobKey(ref, GraphBlobKey(ref))}
	}
	data, err := encode(OutboxEntry{Event: ev, Delivery: EventDelivery{State: DeliveryPending}})
	if err != nil {
		return nil, err
	}
	return newItem(EventKey(ref.WorkflowID, ev.ID), data,
		table.AttrGSI1PK, OutboxIndexPK(DeliveryPending, StatusShard(ref.WorkflowID)),
		table.AttrGSI1SK, ev.ID), nil
}

// workflowPipeline reads the pipeline a workflow item records, if any:
// "pipeline" (name) and "pipeline_version".
func workflowPipeline(data map[string]any) *EventPipeline {
	name, _ := data["pipeline"].(string)
	if name == "" {
		return nil
	}
	version, _ := data["pipeline_version"].(float64)
	return &EventPipeline{Name: name, Version: int(version)}
}

// withOutcomeEvent appends the put of event (if any) to a status change.
func withOutcomeEvent(actions []table.TxAction, event table.Item) []table.TxAction {
	if event == nil {
		return actions
	}
	return append(actions, table.TxPut{Item: event, Cond: table.NotExists{Path: table.AttrPK}})
}

// eventPutFailed reports whether a cancelled status change failed on its
// outbox put (the last action) alone. When the status conditions failed
// too, the change lost a race, or committed in an attempt whose answer was
// lost (its resend then finds its own event).
func eventPutFailed(err error, event table.Item) bool {
	var tx *table.TxCanceledError
	if event == nil || !errors.As(err, &tx) || len(tx.Failed) == 0 {
		return false
	}
	last := len(tx.Failed) - 1
	return tx.Failed[last] && !slices.Contains(tx.Failed[:last], true)
}

// ListPendingEvents returns up to limit undelivered events, oldest first
// (limit <= 0: all), from every shard of the outbox index.
func (r *Repository) ListPendingEvents(ctx context.Context, limit int) ([]OutboxEntry, error) {
	return r.listOutbox(ctx, DeliveryPending, limit)
}

// ListDeadEvents returns up to limit events that ran out of attempts,
// oldest first.
func (r *Repository) ListDeadEvents(ctx context.Context, limit int) ([]OutboxEntry, error) {
	return r.listOutbox(ctx, DeliveryDead, limit)
}

func (r *Repository) listOutbox(ctx context.Context, state DeliveryState, limit int) ([]OutboxEntry, error) {
	items, err := queryShards(ctx, r.t, limit, false, func(shard int) table.Query {
		return table.Query{Index: table.IndexGSI1, PK: OutboxIndexPK(state, shard), Limit: limit}
	})
	if err != nil {
		return nil, err
	}
	return decodeAll[OutboxEntry](items)
}

// ListWorkflowEvents returns a workflow's events in every state, oldest
// first.
func (r *Repository) ListWorkflowEvents(ctx context.Context, workflowID string) ([]OutboxEntry, error) {
	items, err := queryAll(ctx, r.t, table.Query{PK: PrefixWorkflow + workflowID, SKPrefix: PrefixEvent})
	if err != nil {
		return nil, err
	}
	return decodeAll[OutboxEntry](items)
}

// GetEvent reads one outbox item.
func (r *Repository) GetEvent(ctx context.Context, workflowID, eventID string) (OutboxEntry, error) {
	var e OutboxEntry
	return e, r.get(ctx, EventKey(workflowID, eventID), &e)
}

// FindDeadEvent finds a dead event by id alone, from the dead index.
func (r *Repository) FindDeadEvent(ctx context.Context, eventID string) (OutboxEntry, error) {
	for shard := range StatusShards {
		page, err := r.t.Query(ctx, table.Query{Index: table.IndexGSI1, PK: OutboxIndexPK(DeliveryDead, shard), SKFrom: eventID, SKTo: eventID})
		if err != nil {
			return OutboxEntry{}, fmt.Errorf("pipeline: find event %s: %w", eventID, err)
		}
		if len(page.Items) > 0 {
			var e OutboxEntry
			return e, decode(page.Items[0], &e)
		}
	}
	return OutboxEntry{}, fmt.Errorf("pipeline: no dead event %s: %w", eventID, ErrNotFound)
}

// MarkEventDelivered moves a pending event to delivered: it leaves the
// index and expires after DeliveredEventTTL. Of relays racing to mark one
// event exactly one gets applied=true; the others get false and no error
// when it is delivered, ErrStale when it is in another state.
func (r *Repository) MarkEventDelivered(ctx context.Context, workflowID, eventID string, attempts int) (bool, error) {
	now := r.now().UTC()
	return r.moveEvent(ctx, workflowID, eventID, DeliveryDelivered, []table.Update{
		table.Set{Path: pathDeliveryState, Value: string(DeliveryDelivered)},
		table.Set{Path: pathDeliveryAttempts, Value: attempts},
		table.Set{Path: pathDeliveredAt, Value: FormatTime(now)},
		table.Remove{Path: pathDeliveryNext},
		table.Remove{Path: pathDeliveryError},
		table.Remove{Path: table.AttrGSI1PK},
		table.Remove{Path: table.AttrGSI1SK},
		table.Set{Path: table.AttrTTL, Value: float64(now.Add(DeliveredEventTTL).Unix())},
	})
}

// RecordEventFailure notes a failed delivery attempt of a pending event and
// when to try next; the event stays pending.
func (r *Repository) RecordEventFailure(ctx context.Context, workflowID, eventID string, attempts int, lastErr string, next time.Time) error {
	_, err := r.moveEvent(ctx, workflowID, eventID, DeliveryPending, []table.Update{
		table.Set{Path: pathDeliveryAttempts, Value: attempts},
		setOrRemove(pathDeliveryError, lastErr),
		table.Set{Path: pathDeliveryNext, Value: FormatTime(next)},
	})
	return err
}

// MarkEventDead gives up on a pending event: it keeps its data and moves to
// the dead index, where `docpipe events --failed` lists it.
func (r *Repository) MarkEventDead(ctx context.Context, workflowID, eventID string, attempts int, lastErr string) (bool, error) {
	return r.moveEvent(ctx, workflowID, eventID, DeliveryDead, []table.Update{
		table.Set{Path: pathDeliveryState, Value: string(DeliveryDead)},
		table.Set{Path: pathDeliveryAttempts, Value: attempts},
		setOrRemove(pathDeliveryError, lastErr),
		table.Remove{Path: pathDeliveryNext},
		table.Set{Path: table.AttrGSI1PK, Value: OutboxIndexPK(DeliveryDead, StatusShard(workflowID))},
	})
}

// RedeliverEvent puts a dead or delivered event back in the pending index
// with fresh attempts.
func (r *Repository) RedeliverEvent(ctx context.Context, workflowID, eventID string) error {
	updates := []table.Update{
		table.Set{Path: pathDeliveryState, Value: string(DeliveryPending)},
		table.Set{Path: pathDeliveryAttempts, Value: 0},
		table.Remove{Path: pathDeliveryNext},
		table.Remove{Path: pathDeliveredAt},
		table.Remove{Path: table.AttrTTL},
		table.Set{Path: table.AttrGSI1PK, Value: OutboxIndexPK(DeliveryPending, StatusShard(workflowID))},
		table.Set{Path: table.AttrGSI1SK, Value: eventID},
	}
	cond := table.In{Path: pathDeliveryState, Values: []any{string(DeliveryDead), string(DeliveryDelivered)}}
	_, err := r.t.Update(ctx, EventKey(workflowID, eventID), updates, cond)
	if errors.Is(err, table.ErrConditionFailed) {
		e, gerr := r.GetEvent(ctx, workflowID, eventID)
		if gerr != nil {
			return gerr
		}
		return fmt.Errorf("%w: event %s is %s", ErrStale, eventID, e.Delivery.State)
	}
	return err
}

// moveEvent applies updates to a pending event. An event already in to
// (another relay got there first) gives applied=false and no error.
func (r *Repository) moveEvent(ctx context.Context, workflowID, eventID string, to DeliveryState, updates []table.Update) (bool, error) {
	_, err := r.t.Update(ctx, EventKey(workflowID, eventID), updates, table.Equals{Path: pathDeliveryState, Value: string(DeliveryPending)})
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, table.ErrConditionFailed) {
		return false, fmt.Errorf("pipeline: event %s: %w", eventID, err)
	}
	e, gerr := r.GetEvent(ctx, workflowID, eventID)
	switch {
	case gerr != nil:
		return false, gerr
	case e.Delivery.State == to:
		return false, nil
	}
	return false, fmt.Errorf("%w: event %s is %s, not pending", ErrStale, eventID, e.Delivery.State)
}
