// Package relay delivers the outbox: every pending event goes to every
// configured sink at least once, in order per workflow, and is marked
// delivered only afterwards (the transactional outbox's forwarder). A
// failed attempt is recorded on the item with the time of the next one
// (jittered exponential backoff), so retries survive restarts; after
// MaxAttempts the event is dead until someone redelivers it.
package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
)

// Defaults of a Relay.
const (
	DefaultMaxAttempts = 10
	DefaultConcurrency = 8
	DefaultInterval    = time.Second
)

// Relay delivers pending outbox events. The zero values of its optional
// fields are the defaults.
type Relay struct {
	Repo  *pipeline.Repository
	Sinks []Sink // every event goes to these
	// ProjectSinks returns the sinks a project's events go to besides
	// Sinks; nil means none. An event that has no sink at all stays pending
	// untouched, as if no relay ran.
	ProjectSinks func(ctx context.Context, projectID string) ([]Sink, error)

	MaxAttempts int                             // attempts before an event is dead
	Concurrency int                             // workflows delivered at once
	Backoff     func(attempt int) time.Duration // wait after failed attempt n (from 1)
	Now         func() time.Time
	// BlobURI renders a blob key as a URI (file:// or s3://) for the
	// event's results; nil leaves the URIs out.
	BlobURI func(key string) string
	Logger  *slog.Logger
}

// Stats counts what one Drain did.
type Stats struct {
	Delivered int // events every sink accepted
	Retrying  int // events that failed an attempt and wait for the next
	Dead      int // events out of attempts
	Waiting   int // events not yet due, or behind an earlier one
}

// Backoff is the default wait after failed attempt n: 5s doubling to a
// 10-minute ceiling, jittered to between half and all of it so that
// receivers coming back are not hit in lock step.
func Backoff(n int) time.Duration {
	d := min(5*time.Second<<min(max(n-1, 0), 10), 10*time.Minute)
	return d/2 + rand.N(d/2+1)
}

func (r *Relay) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Relay) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Drain makes one pass over the pending index: every workflow's due events
// are delivered oldest first, stopping at the first one that fails (its
// successors wait for it). A dead event does not block its successors.
func (r *Relay) Drain(ctx context.Context) (Stats, error) {
	pending, err := r.Repo.ListPendingEvents(ctx, 0)
	if err != nil {
		return Stats{}, err
	}
	return r.deliverInOrder(ctx, pending)
}

// DeliverWorkflows delivers the pending events of the given workflows, for
// a caller that learned of new events some other way (a table stream).
// Events of other workflows are left for the next Drain.
func (r *Relay) DeliverWorkflows(ctx context.Context, workflowIDs []string) (Stats, error) {
	var pending []pipeline.OutboxEntry
	seen := map[string]bool{}
	for _, id := range workflowIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		evs, err := r.Repo.ListWorkflowEvents(ctx, id)
		if err != nil {
			return Stats{}, err
		}
		for _, e := range evs {
			if e.Delivery.State == pipeline.DeliveryPending {
				pending = append(pending, e)
			}
		}
	}
	return r.deliverInOrder(ctx, pending)
}

// deliverInOrder groups events (oldest first) by workflow and delivers the
// workflows concurrently, each one's events in sequence.
func (r *Relay) deliverInOrder(ctx context.Context, pending []pipeline.OutboxEntry) (Stats, error) {
	var order []string
	byWorkflow := map[string][]pipeline.OutboxEntry{}
	for _, e := range pending {
		id := e.Event.WorkflowID
		if _, ok := byWorkflow[id]; !ok {
			order = append(order, id)
		}
		byWorkflow[id] = append(byWorkflow[id], e)
	}
	results := make([]Stats, len(order))
	g, gctx := errgroup.WithContext(ctx)
	limit := r.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	g.SetLimit(limit)
	for i, id := range order {
		g.Go(func() error {
			s, err := r.deliverWorkflow(gctx, byWorkflow[id])
			results[i] = s
			return err
		})
	}
	err := g.Wait()
	var total Stats
	for _, s := range results {
		total.Delivered += s.Delivered
		total.Retrying += s.Retrying
		total.Dead += s.Dead
		total.Waiting += s.Waiting
	}
	return total, err
}

func (r *Relay) deliverWorkflow(ctx context.Context, events []pipeline.OutboxEntry) (Stats, error) {
	var s Stats
	// A workflow's events share its project, so they share their sinks.
	sinks, err := r.sinksOf(ctx, events[0].Event.ProjectID)
	if err != nil {
		return s, err
	}
	if len(sinks) == 0 {
		s.Waiting = len(events)
		return s, nil
	}
	now := r.now()
	for i, e := range events {
		if next := e.Delivery.NextAttemptAt; next != "" && next > pipeline.FormatTime(now) {
			s.Waiting += len(events) - i
			return s, nil
		}
		outcome, err := r.attempt(ctx, e, sinks)
		if err != nil {
			return s, err
		}
		switch outcome {
		case pipeline.DeliveryDelivered:
			s.Delivered++
		case pipeline.DeliveryDead:
			s.Dead++
		default:
			s.Retrying++
			s.Waiting += len(events) - i - 1
			return s, nil
		}
	}
	return s, nil
}

// attempt sends one event to every sink and records the outcome. Its error
// is a table error; a sink's failure is an outcome.
func (r *Relay) attempt(ctx context.Context, e pipeline.OutboxEntry, sinks []Sink) (pipeline.DeliveryState, error) {
	ev := e.Event
	body, err := r.Body(ev)
	if err != nil {
		return "", err
	}
	attempts := e.Delivery.Attempts + 1
	var failures []error
	for _, sink := range sinks {
		if err := sink.Deliver(ctx, ev, body); err != nil {
			failures = append(failures, err)
		}
	}
	log := r.logger().With("event", ev.ID, "type", ev.Type, "workflow", ev.WorkflowID, "attempt", attempts)
	if ctx.Err() != nil {
		return "", ctx.Err() // shutting down: not the receiver's fault
	}
	if len(failures) == 0 {
		if _, err := r.Repo.MarkEventDelivered(ctx, ev.WorkflowID, ev.ID, attempts); settled(err) != nil {
			return "", err
		}
		log.Debug("event delivered")
		return pipeline.DeliveryDelivered, nil
	}
	why := errors.Join(failures...).Error()
	maxAttempts := r.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	if attempts >= maxAttempts {
		if _, err := r.Repo.MarkEventDead(ctx, ev.WorkflowID, ev.ID, attempts, why); settled(err) != nil {
			return "", err
		}
		log.Warn("event undeliverable; redeliver with `docpipe events redeliver`", "error", why)
		return pipeline.DeliveryDead, nil
	}
	backoff := r.Backoff
	if backoff == nil {
		backoff = Backoff
	}
	if err := r.Repo.RecordEventFailure(ctx, ev.WorkflowID, ev.ID, attempts, why, r.now().Add(backoff(attempts))); settled(err) != nil {
		return "", err
	}
	log.Info("event delivery failed; will retry", "error", why)
	return pipeline.DeliveryPending, nil
}

// sinksOf is where a project's events go: the relay's sinks, then the
// project's own.
func (r *Relay) sinksOf(ctx context.Context, projectID string) ([]Sink, error) {
	if r.ProjectSinks == nil {
		return r.Sinks, nil
	}
	own, err := r.ProjectSinks(ctx, projectID)
	if err != nil {
		return nil, fmt.Errorf("relay: sinks of project %s: %w", projectID, err)
	}
	return append(slices.Clip(r.Sinks), own...), nil
}

// settled drops ErrStale: another relay moved the event on first, so there
// is nothing left for this one to record.
func settled(err error) error {
	if errors.Is(err, pipeline.ErrStale) {
		return nil
	}
	return err
}

// Body is the JSON sinks receive for ev: the stored event with its result
// URIs filled in.
func (r *Relay) Body(ev pipeline.Event) ([]byte, error) {
	if ev.Results != nil && r.BlobURI != nil {
		res := *ev.Results
		res.SummaryURI, res.GraphURI = r.BlobURI(res.SummaryKey), r.BlobURI(res.GraphKey)
		ev.Results = &res
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("relay: encode event %s: %w", ev.ID, err)
	}
	return b, nil
}

// Run drains the backlog at once and then every interval (DefaultInterval
// when zero) until ctx ends. A failing pass is logged and retried on the
// next tick, so a table hiccup does not stop delivery. It returns nil when
// ctx ends.
func Run(ctx context.Context, r *Relay, interval time.Duration) error {
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := r.Drain(ctx); err != nil && ctx.Err() == nil {
			r.logger().Warn("event relay pass failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
