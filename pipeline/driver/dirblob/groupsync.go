package dirblob

import (
	"context"
	"sync"
	"sync/atomic"
)

// groupSync shares filesystem syncs among the callers that need one at
// the same time (group commit). Writes are numbered in the order they
// completed; a sync covers every write counted when it began. One sync
// runs at a time. A caller whose writes the running sync covers waits for
// it; the others wait for it to end and then start the next one together:
// the first of them to get there starts it, with a count that covers them
// all, and the rest join it.
//
// Every waiter of a sync is woken at once when it ends. A mutex held for
// the whole sync would hand itself to its waiters one at a time, each
// needing the scheduler before the next could go on, and with many
// documents in flight that chain of wake-ups, not the disk, set the pace.
type groupSync struct {
	synced  atomic.Uint64 // writes the last successful sync covered
	mu      sync.Mutex    // guards running, and the writes to synced
	running *syncRound    // the sync under way; nil when none
}

// syncRound is one sync: covers is the write count it began at; err is
// its outcome, set before done is closed.
type syncRound struct {
	covers uint64
	done   chan struct{}
	err    error
}

// await returns once a sync that began after the first target writes
// completed has succeeded, starting one when none under way covers them.
// written reads the count of completed writes; sync is the filesystem
// sync. It returns the covering sync's error, or ctx's when ctx ends
// first (the sync itself runs on for its other waiters).
func (g *groupSync) await(ctx context.Context, target uint64, written func() uint64, sync func() error) error {
	for {
		g.mu.Lock()
		if g.synced.Load() >= target {
			g.mu.Unlock()
			return nil
		}
		r := g.running
		if r == nil {
			r = &syncRound{covers: written(), done: make(chan struct{})}
			g.running = r
			g.mu.Unlock()
			g.run(r, sync)
			return r.err
		}
		g.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.covers >= target {
			return r.err
		}
		// r began before our writes completed: the next sync is ours.
	}
}

// run performs round r's sync and wakes its waiters.
func (g *groupSync) run(r *syncRound, sync func() error) {
	r.err = sync()
	g.mu.Lock()
	if r.err == nil && r.covers > g.synced.Load() {
		g.synced.Store(r.covers)
	}
	g.running = nil
	g.mu.Unlock()
	close(r.done)
}

// isSynced reports whether the first target writes are known durable,
// without waiting.
func (g *groupSync) isSynced(target uint64) bool { return g.synced.Load() >= target }
