package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// maxAttempts bounds the read-and-retry loop of a write that lost a race to
// a change it can still follow (or to a transaction conflict on DynamoDB).
const maxAttempts = 8

// errLostRace is what an attempt returns when another writer got there
// first and the write is still worth trying again.
var errLostRace = errors.New("pipeline: lost a race")

// lostRace reports whether a write failed because another writer changed
// the item first (its condition no longer held) or at the same time.
func lostRace(err error) bool {
	return errors.Is(err, table.ErrConditionFailed) || errors.Is(err, table.ErrTransactionConflict)
}

// retry runs attempt until it returns anything but errLostRace, waiting
// before each new try. Out of attempts it reports a transaction conflict,
// which callers retry, never a stale state, which they may take as
// "someone else did it". what names the write for that error.
func (r *Repository) retry(ctx context.Context, what func() string, attempt func() error) error {
	for n := range maxAttempts {
		if n > 0 {
			if err := r.sleep(ctx, backoff(n-1)); err != nil {
				return err
			}
		}
		if err := attempt(); !errors.Is(err, errLostRace) {
			return err
		}
	}
	return fmt.Errorf("pipeline: %s keeps changing: %w", what(), table.ErrTransactionConflict)
}

// backoff is the wait before retry n (from 0): jittered and growing
// exponentially from 1ms to a 64ms ceiling, so that racers do not collide
// in lock step.
func backoff(n int) time.Duration {
	d := time.Duration(1<<min(n, 6)) * time.Millisecond
	return d/2 + rand.N(d)
}

// sleepContext waits d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
