package pipeline

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// ids hands out ULIDs: time ordered, and strictly increasing within one
// process even inside one millisecond (monotonic entropy), so "newest first"
// is reverse key order and audit items sort in the order they were made.
var ids = struct {
	sync.Mutex
	// Two sources, so ids made for an injected clock's times do not break
	// the order of ids made for the real one.
	now  *ulid.MonotonicEntropy
	last uint64 // newest millisecond NewID used
	// NewIDAt's entropy, one per millisecond it was given lately (at most
	// atKept, the oldest forgotten first): its callers' times interleave
	// (a clock read before another caller's, an injected clock beside the
	// real one), and one source is monotonic only from one id to the next.
	at      map[uint64]*ulid.MonotonicEntropy
	atOrder []uint64
}{now: ulid.Monotonic(rand.Reader, 0), at: map[uint64]*ulid.MonotonicEntropy{}}

// atKept is how many milliseconds NewIDAt keeps increasing ids for.
const atKept = 1024

// NewID returns a new ULID for the current time, greater than every id
// NewID returned before in this process. Safe for concurrent use.
func NewID() string {
	ids.Lock()
	defer ids.Unlock()
	// Read the clock under the lock, and never go back in time (a clock
	// step), so ids keep increasing.
	ids.last = max(ids.last, ulidTime(time.Now()))
	return newID(ids.last, ids.now)
}

// NewIDAt returns a new ULID whose time part is t (clamped to the range a
// ULID can hold), for callers with an injected clock. Safe for concurrent
// use; ids made for the same millisecond increase.
func NewIDAt(t time.Time) string {
	ids.Lock()
	defer ids.Unlock()
	ms := ulidTime(t)
	e := ids.at[ms]
	if e == nil {
		if len(ids.atOrder) == atKept {
			delete(ids.at, ids.atOrder[0])
			ids.atOrder = ids.atOrder[1:]
		}
		e = ulid.Monotonic(rand.Reader, 0)
		ids.at[ms] = e
		ids.atOrder = append(ids.atOrder, ms)
	}
	return newID(ms, e)
}

// newID needs ids locked.
func newID(ms uint64, entropy *ulid.MonotonicEntropy) string {
	id, err := ulid.New(ms, entropy)
	if err != nil {
		// Monotonic entropy fails only when a millisecond's increments run
		// out (about 2^48 ids); fresh entropy still gives a unique id.
		id = ulid.MustNew(ms, rand.Reader)
	}
	return id.String()
}

// DeterministicID returns a valid ULID whose time part is t and whose
// entropy is a hash of parts: the same inputs always give the same id. It
// derives a workflow id from an S3 event (bucket, key, ETag), so a
// redelivered event maps onto the workflow it already started.
func DeterministicID(t time.Time, parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		// Length-prefix each part so ("ab","c") and ("a","bc") differ.
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		io.WriteString(h, p)
	}
	var entropy [10]byte
	copy(entropy[:], h.Sum(nil))
	var id ulid.ULID
	// SetTime cannot fail: ulidTime clamps to ulid.MaxTime().
	_ = id.SetTime(ulidTime(t))
	_ = id.SetEntropy(entropy[:])
	return id.String()
}

// ulidTime converts t to ULID milliseconds, clamped to what a ULID holds.
func ulidTime(t time.Time) uint64 {
	ms := t.UnixMilli()
	if ms < 0 {
		return 0
	}
	if uint64(ms) > ulid.MaxTime() {
		return ulid.MaxTime()
	}
	return uint64(ms)
}
