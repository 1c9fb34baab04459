package pipeline_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/docpipe/docpipe/pipeline"
)

func TestNewIDConcurrentUniqueAndOrdered(t *testing.T) {
	t.Parallel()
	const workers, each = 8, 500
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], pipeline.NewID())
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, ids := range got {
		// Each worker's ids increase: monotonic even within a millisecond.
		if !slices.IsSorted(ids) {
			t.Fatal("ids from one goroutine are not increasing")
		}
		for _, id := range ids {
			if _, err := ulid.ParseStrict(id); err != nil {
				t.Fatalf("%q is not a ULID: %v", id, err)
			}
			if seen[id] {
				t.Fatalf("duplicate id %s", id)
			}
			seen[id] = true
		}
	}
}

func TestNewIDAt(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	a, b := pipeline.NewIDAt(at), pipeline.NewIDAt(at)
	if a >= b {
		t.Fatalf("ids for the same instant are not increasing: %s, %s", a, b)
	}
	if got := ulid.MustParse(a).Timestamp(); !got.Equal(at) {
		t.Fatalf("time part = %v, want %v", got, at)
	}
	if earlier := pipeline.NewIDAt(at.Add(-time.Second)); earlier >= a {
		t.Fatalf("an earlier time sorts after a later one: %s >= %s", earlier, a)
	}
	if id := pipeline.NewIDAt(time.Unix(-100, 0)); ulid.MustParse(id).Time() != 0 {
		t.Fatalf("a time before the epoch is not clamped: %s", id)
	}
}

// Ids made for one millisecond increase even when ids for other times are
// made in between: an audit trail written at the same instant stays in
// the order it was written.
func TestNewIDAtIncreasesAcrossInterleavedTimes(t *testing.T) {
	t.Parallel()
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	prev := pipeline.NewIDAt(at)
	for i := range 200 {
		pipeline.NewIDAt(at.Add(time.Duration(i+1) * time.Millisecond))
		pipeline.NewIDAt(at.Add(-time.Hour))
		id := pipeline.NewIDAt(at)
		if id <= prev {
			t.Fatalf("id %d for the same millisecond %s sorts before the one made earlier %s", i, id, prev)
		}
		prev = id
	}
}

func TestDeterministicID(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 2, 3, 4, 5, 6, 7_000_000, time.UTC)
	id := pipeline.DeterministicID(at, "bucket", "key.pdf", "etag-1")
	if _, err := ulid.ParseStrict(id); err != nil {
		t.Fatalf("%q is not a ULID: %v", id, err)
	}
	if got := ulid.MustParse(id).Timestamp(); !got.Equal(at) {
		t.Fatalf("time part = %v, want %v", got, at)
	}
	if again := pipeline.DeterministicID(at, "bucket", "key.pdf", "etag-1"); again != id {
		t.Fatalf("same inputs gave %s and %s", id, again)
	}
	for _, other := range []string{
		pipeline.DeterministicID(at, "bucket", "key.pdf", "etag-2"),
		pipeline.DeterministicID(at.Add(time.Millisecond), "bucket", "key.pdf", "etag-1"),
		pipeline.DeterministicID(at, "bucketkey.pdf", "", "etag-1"),
	} {
		if other == id {
			t.Fatalf("different inputs gave the same id %s", id)
		}
	}
	if pipeline.DeterministicID(at, "ab", "c") == pipeline.DeterministicID(at, "a", "bc") {
		t.Fatal("part boundaries do not matter")
	}
	far := time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC)
	if ulid.MustParse(pipeline.DeterministicID(far, "x")).Time() != ulid.MaxTime() {
		t.Fatal("a time past the ULID range is not clamped")
	}
}
