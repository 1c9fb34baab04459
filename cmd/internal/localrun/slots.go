package localrun

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// A document of SmallDocBytes or less takes 1/SlotShares of a document
// slot, a larger one more, up to a whole slot from 1 MiB on: small
// documents spend their time waiting on table commits and blob syncs that
// many of them can share, large ones on memory and CPU that grow with
// their size.
const (
	SlotShares    = 96
	SmallDocBytes = (1 << 20) / SlotShares // about 11 KiB
)

// slots bound the documents processed at once by their size.
type slots struct{ sem *semaphore.Weighted }

// newSlots gives room for n large documents, or SlotShares times as many
// small ones.
func newSlots(n int) slots {
	return slots{sem: semaphore.NewWeighted(int64(max(1, n)) * SlotShares)}
}

// Shares is what a document of size bytes takes of the slots.
func Shares(size int64) int64 {
	return min(SlotShares, max(1, (size+SmallDocBytes-1)/SmallDocBytes))
}

// acquire waits for room for a document of size bytes; release(size)
// gives it back.
func (s slots) acquire(ctx context.Context, size int64) error {
	return s.sem.Acquire(ctx, Shares(size))
}

func (s slots) release(size int64) { s.sem.Release(Shares(size)) }
