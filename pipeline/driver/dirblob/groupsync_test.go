package dirblob_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
)

// Many writers flushing at once: each Flush returns only once a sync that
// began after its Put completed has finished, syncs never overlap, and the
// writers share them.
func TestFlushWaitsForASyncBegunAfterItsWrite(t *testing.T) {
	t.Parallel()
	s, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var (
		durable  atomic.Uint64 // the most Puts a finished sync began after
		running  atomic.Int32
		syncs    atomic.Int64
		overlaps atomic.Int64
	)
	dirblob.SetSyncHook(s, func(string) error {
		began := dirblob.Written(s)
		if running.Add(1) > 1 {
			overlaps.Add(1)
		}
		// Long enough for writers to Put and Flush during the sync.
		time.Sleep(time.Millisecond)
		running.Add(-1)
		for {
			cur := durable.Load()
			if began <= cur || durable.CompareAndSwap(cur, began) {
				break
			}
		}
		syncs.Add(1)
		return nil
	})
	const writers, rounds = 32, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				ctx := blob.WithWriteMark(context.Background())
				if err := blob.PutBytes(ctx, s, fmt.Sprintf("w%d/r%d", w, r), []byte("x")); err != nil {
					t.Error(err)
					return
				}
				seq, _ := blob.WrittenUnder(ctx)
				if err := s.Flush(ctx); err != nil {
					t.Error(err)
					return
				}
				if d := durable.Load(); d < seq {
					t.Errorf("Flush of Put %d returned when the syncs finished had begun after %d Puts", seq, d)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := overlaps.Load(); n > 0 {
		t.Errorf("%d syncs began while another ran", n)
	}
	if n := syncs.Load(); n >= writers*rounds {
		t.Errorf("%d syncs for %d flushes: none shared", n, writers*rounds)
	}
	t.Logf("%d syncs for %d flushes", syncs.Load(), writers*rounds)
}

// A Flush whose sync is under way returns when its context ends; the sync
// still completes for the others.
func TestFlushWaitingReturnsOnCancel(t *testing.T) {
	t.Parallel()
	s, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	dirblob.SetSyncHook(s, func(string) error {
		close(started)
		<-release
		return nil
	})
	ctx := context.Background()
	if err := blob.PutBytes(ctx, s, "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	leader := make(chan error, 1)
	go func() { leader <- s.Flush(ctx) }()
	<-started
	wctx, cancel := context.WithCancel(ctx)
	waiter := make(chan error, 1)
	go func() { waiter <- s.Flush(wctx) }()
	time.Sleep(10 * time.Millisecond) // let it join the sync under way
	cancel()
	if err := <-waiter; !errors.Is(err, context.Canceled) {
		t.Errorf("waiting Flush after cancel = %v, want context.Canceled", err)
	}
	close(release)
	if err := <-leader; err != nil {
		t.Errorf("the sync's own Flush = %v", err)
	}
}
