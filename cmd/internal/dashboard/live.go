package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// Live updates cost the same however many browsers are open: one poller
// per server reads the status index once per interval and fans the
// snapshot out to every subscriber. Subscribers only receive.

// Bounds of one snapshot.
const (
	liveRunning = 50     // running and waiting analyses listed
	liveFailed  = 20     // newest failures listed
	countUpTo   = 10_000 // counts stop here ("10000+"): on DynamoDB a count reads what it counts
)

// Snapshot is one reading of the status index.
type Snapshot struct {
	At      string         `json:"at"`
	Counts  map[string]int `json:"counts"`  // pending, in_progress, waiting_review, failed
	Capped  bool           `json:"capped"`  // some count stopped at CountUpTo
	Running []progressView `json:"running"` // in progress, then pending; newest first
	Failed  []progressView `json:"failed"`  // newest first
	Changed []string       `json:"changed"` // analyses that moved since the last snapshot, or left the index
	Error   string         `json:"error,omitempty"`
}

// CountUpTo is exported to templates for the "N+" display.
func (Snapshot) CountUpTo() int { return countUpTo }

func (s *Server) snapshot(ctx context.Context) (Snapshot, error) {
	t := s.opts.Repo.Table()
	snap := Snapshot{Counts: map[string]int{}, Running: []progressView{}, Failed: []progressView{}, Changed: []string{}}
	for name, st := range listStatuses {
		n, err := countStatus(ctx, t, st, countUpTo)
		if err != nil {
			return snap, err
		}
		snap.Counts[name] = n
		snap.Capped = snap.Capped || n >= countUpTo
	}
	for _, st := range []pipeline.WorkflowStatus{pipeline.WorkflowInProgress, pipeline.WorkflowPending} {
		list, _, err := statusPage(ctx, t, st, "", liveRunning-len(snap.Running))
		if err != nil {
			return snap, err
		}
		for _, p := range list {
			snap.Running = append(snap.Running, newProgressView(p))
		}
		if len(snap.Running) >= liveRunning {
			break
		}
	}
	failed, _, err := statusPage(ctx, t, pipeline.WorkflowFailed, "", liveFailed)
	if err != nil {
		return snap, err
	}
	for _, p := range failed {
		snap.Failed = append(snap.Failed, newProgressView(p))
	}
	snap.At = time.Now().UTC().Format(time.RFC3339Nano)
	return snap, nil
}

// broker runs the poller and keeps the subscribers.
type broker struct {
	read    func(context.Context) (Snapshot, error)
	maxSubs int // subscribers at once

	mu     sync.Mutex
	subs   map[chan []byte]struct{}
	last   []byte            // the latest encoded snapshot
	seen   map[string]string // workflow → updated_at in the latest snapshot
	wakeup chan struct{}
}

func newBroker(read func(context.Context) (Snapshot, error), maxSubs int) *broker {
	return &broker{read: read, maxSubs: maxSubs, subs: map[chan []byte]struct{}{}, wakeup: make(chan struct{}, 1)}
}

// subscribe returns a channel of encoded snapshots, starting with the
// latest one when there is one. Slow subscribers miss intermediate
// snapshots rather than holding the poller up. ok is false when maxSubs
// are subscribed already.
func (b *broker) subscribe() (_ chan []byte, unsubscribe func(), ok bool) {
	ch := make(chan []byte, 1)
	b.mu.Lock()
	if len(b.subs) >= b.maxSubs {
		b.mu.Unlock()
		return nil, nil, false
	}
	b.subs[ch] = struct{}{}
	if b.last != nil {
		ch <- b.last
	}
	b.mu.Unlock()
	b.poke()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	}, true
}

// poke asks for a snapshot before the next tick (after an upload or a
// re-run, or for a new subscriber); pokes between two polls merge.
func (b *broker) poke() {
	select {
	case b.wakeup <- struct{}{}:
	default:
	}
}

func (b *broker) subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// run polls every interval, and at most once per poke in between, while
// anyone is subscribed.
func (b *broker) run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-b.wakeup:
		}
		if b.subscribers() > 0 {
			b.pollOnce(ctx)
		}
	}
}

// pollOnce reads one snapshot and sends it to every subscriber.
func (b *broker) pollOnce(ctx context.Context) {
	snap, err := b.read(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		snap.Error = fmt.Sprintf("reading the status index: %v", err)
	}
	now := map[string]string{}
	for _, list := range [][]progressView{snap.Running, snap.Failed} {
		for _, p := range list {
			now[p.WorkflowID] = p.UpdatedAt
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		for id, at := range now {
			if b.seen[id] != at {
				snap.Changed = append(snap.Changed, id)
			}
		}
		for id := range b.seen {
			if _, ok := now[id]; !ok {
				snap.Changed = append(snap.Changed, id)
			}
		}
		b.seen = now
	}
	msg, _ := json.Marshal(snap)
	b.last = msg
	for ch := range b.subs {
		select {
		case <-ch: // drop the unread older snapshot
		default:
		}
		ch <- msg
	}
}

// GET /api/events: server-sent events, one "snapshot" event per poll.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	ch, unsubscribe, ok := s.live.subscribe()
	if !ok {
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusServiceUnavailable, "too many live streams open; try again later")
		return
	}
	defer unsubscribe()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return
	}
	_ = rc.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case msg := <-ch:
			if _, err := fmt.Fprintf(w, "event: snapshot\ndata: %s\n\n", msg); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}
