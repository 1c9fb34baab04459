package blob

import (
	"context"
	"sync/atomic"
)

// A write mark lets a Syncer flush only what one piece of work wrote. A
// step runs under WithWriteMark; a Syncer's Put notes the sequence number
// its write got (NoteWrite), and its Flush under that context need only
// cover the highest one noted: nothing when the step wrote nothing, and
// no new sync when one that another step started has covered it already.
// A Flush under a context without a mark covers every Put before it.

type writeMarkKey struct{}

type writeMark struct{ seq atomic.Uint64 }

// WithWriteMark returns a context under which a Syncer's writes are
// noted, for a Flush under the same context (or one derived from it).
func WithWriteMark(ctx context.Context) context.Context {
	return context.WithValue(ctx, writeMarkKey{}, &writeMark{})
}

// NoteWrite records, in ctx's write mark if it has one, that a write got
// sequence number seq in its store's order.
func NoteWrite(ctx context.Context, seq uint64) {
	m, ok := ctx.Value(writeMarkKey{}).(*writeMark)
	if !ok {
		return
	}
	for {
		cur := m.seq.Load()
		if seq <= cur || m.seq.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// WrittenUnder returns the highest sequence number noted in ctx's write
// mark (0: nothing written under it), and whether ctx has a mark.
func WrittenUnder(ctx context.Context) (seq uint64, marked bool) {
	m, ok := ctx.Value(writeMarkKey{}).(*writeMark)
	if !ok {
		return 0, false
	}
	return m.seq.Load(), true
}
