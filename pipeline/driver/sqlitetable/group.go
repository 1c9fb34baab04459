package sqlitetable

import (
	"context"
	"sync"

	"github.com/docpipe/docpipe/pipeline/table"
)

// maxBatch bounds how many transactions share one SQLite transaction, and
// so how long the last of them waits for the first.
const maxBatch = 128

// pending is one caller's transaction waiting for, or in, a batch.
type pending struct {
	ctx     context.Context
	actions []table.TxAction
	puts    []prepared // the puts among actions, ready to write
	ahead   any        // what the write hook read before the batch

	// Set by the batch before done is closed.
	after []table.Item
	err   error

	done chan struct{} // closed when the outcome is known
	lead chan struct{} // receives when this caller is to run the next batch
}

// committer gathers the transactions that arrive while one is being
// committed, so that they are committed together (group commit). There is
// no background goroutine: the caller that finds no batch running runs
// one with everything queued, then hands the queue on to the oldest
// caller still waiting. A caller therefore runs at most one batch, and
// a lone transaction is committed at once, without waiting for company.
type committer struct {
	mu      sync.Mutex
	queue   []*pending
	running bool
}

// submit queues p and returns once run has decided its outcome.
func (c *committer) submit(p *pending, run func([]*pending)) {
	c.mu.Lock()
	c.queue = append(c.queue, p)
	if c.running {
		c.mu.Unlock()
		select {
		case <-p.done:
			return
		case <-p.lead:
		}
	} else {
		c.running = true
		c.mu.Unlock()
	}

	c.mu.Lock()
	n := min(len(c.queue), maxBatch)
	batch := make([]*pending, n)
	copy(batch, c.queue)
	c.queue = append(c.queue[:0], c.queue[n:]...)
	c.mu.Unlock()

	run(batch)
	for _, q := range batch {
		close(q.done)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		c.running = false
		return
	}
	c.queue[0].lead <- struct{}{}
}
