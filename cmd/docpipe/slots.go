package main

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// A document of smallDocBytes or less takes 1/slotShares of a document
// slot, a larger one more, up to a whole slot from 1 MiB on: small
// documents spend their time waiting on table commits and blob syncs that
// many of them can share, large ones on memory and CPU that grow with
// their size.
const (
	slotShares    = 96
	smallDocBytes = (1 << 20) / slotShares // about 11 KiB
)

// docSlots bounds the documents processed at once by their size.
type docSlots struct{ sem *semaphore.Weighted }

// newDocSlots gives room for n large documents, or slotShares times as
// many small ones.
func newDocSlots(n int) docSlots {
	return docSlots{sem: semaphore.NewWeighted(int64(max(1, n)) * slotShares)}
}

// shares is what a document of size bytes takes of the slots.
func shares(size int64) int64 {
	return min(slotShares, max(1, (size+smallDocBytes-1)/smallDocBytes))
}

// acquire waits for room for a document of size bytes; release(size)
// gives it back.
func (s docSlots) acquire(ctx context.Context, size int64) error {
	return s.sem.Acquire(ctx, shares(size))
}

func (s docSlots) release(size int64) { s.sem.Release(shares(size)) }
