package main

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// A document of smallDocBytes or less takes 1/slotShares of a document
// slot; larger ones take more, up to a whole slot from 1 MiB on. A folder
// of one-page files spends its time in per-document round trips (table
// transactions, blob writes and the syncs before each step is recorded)
// rather than in the CPU, so running many of them at once keeps the cores
// busy and lets the table commit their transactions, and the blob store
// sync their files, together; large documents, whose memory and CPU grow
// with their size, still run --concurrency at a time. (With a state home
// on ext4, 1,000 one-page files ran 17% faster with 96 in flight than with
// 32; once a step cost one table write instead of two, 192 ran another 5%
// faster than 96. On tmpfs, where nothing waits, all were the same.)
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
