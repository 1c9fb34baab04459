package sqlitetable_test

import (
	"errors"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

func openTable(t testing.TB) *sqlitetable.Table {
	t.Helper()
	tb, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

func TestConformance(t *testing.T) {
	t.Parallel()
	tabletest.Exercise(t, func(t *testing.T) table.Table { return openTable(t) })
}

func TestConformanceInMemory(t *testing.T) {
	t.Parallel()
	tb, err := sqlitetable.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	// One shared table for every subtest, as on a remote emulator.
	tabletest.Exercise(t, func(t *testing.T) table.Table { return tb }, tabletest.Reduced(), tabletest.Sequential())
}

// Two handles on one file (two processes, in effect) serialise their
// transactions: no lost update.
func TestTwoHandlesOneFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shared.db")
	var handles []*sqlitetable.Table
	for range 2 {
		tb, err := sqlitetable.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tb.Close() })
		handles = append(handles, tb)
	}
	const each = 40
	k := table.Key{PK: "counter", SK: "C"}
	var wg sync.WaitGroup
	for _, tb := range handles {
		for range 2 {
			wg.Go(func() {
				for range each {
					if _, err := tb.Update(t.Context(), k, []table.Update{table.Add{Path: "n", Delta: 1}}, nil); err != nil {
						t.Errorf("Add: %v", err)
					}
				}
			})
		}
	}
	wg.Wait()
	it, err := handles[1].Get(t.Context(), k)
	if err != nil || it["n"] != float64(4*each) {
		t.Fatalf("counter = %v, %v; want %d", it["n"], err, 4*each)
	}
}

func TestClockDecidesExpiry(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tb, err := sqlitetable.Open(filepath.Join(t.TempDir(), "ttl.db"), sqlitetable.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ctx := t.Context()
	k := table.Key{PK: "p", SK: "s"}
	if err := tb.Put(ctx, table.Item{"PK": "p", "SK": "s", "ttl": 1_000_100.5}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Get(ctx, k); err != nil {
		t.Fatalf("live item: %v", err)
	}
	mu.Lock()
	now = time.Unix(1_000_100, 600_000_000) // just past the fractional ttl
	mu.Unlock()
	if _, err := tb.Get(ctx, k); !errors.Is(err, table.ErrNotFound) {
		t.Fatalf("expired item: err = %v", err)
	}
	if n, err := tb.PurgeExpired(ctx); err != nil || n != 1 {
		t.Fatalf("PurgeExpired = %d, %v", n, err)
	}
}

func TestPageTokenBelongsToItsQuery(t *testing.T) {
	t.Parallel()
	tb := openTable(t)
	ctx := t.Context()
	for _, sk := range []string{"a", "b", "c"} {
		if err := tb.Put(ctx, table.Item{"PK": "p", "SK": sk}, nil); err != nil {
			t.Fatal(err)
		}
	}
	page, err := tb.Query(ctx, table.Query{PK: "p", Limit: 1})
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	for _, q := range []table.Query{
		{PK: "other", PageToken: page.Next},
		{PK: "p", Index: table.IndexGSI1, PageToken: page.Next},
		{PK: "p", PageToken: "not a token"},
	} {
		if _, err := tb.Query(ctx, q); err == nil {
			t.Errorf("Query %+v accepted a foreign token", q)
		}
	}
	if _, err := tb.Query(ctx, table.Query{PK: "p", Index: "GSI9"}); err == nil {
		t.Error("unknown index accepted")
	}
	if _, err := tb.Query(ctx, table.Query{PK: "p", SKPrefix: "a", SKFrom: "a"}); err == nil {
		t.Error("prefix and range together accepted")
	}
}

func TestRejectsBadItems(t *testing.T) {
	t.Parallel()
	tb := openTable(t)
	ctx := t.Context()
	for name, it := range map[string]table.Item{
		"no PK":         {"SK": "s"},
		"numeric SK":    {"PK": "p", "SK": 1},
		"empty GSI key": {"PK": "p", "SK": "s", "GSI1PK": "", "GSI1SK": "x"},
		"numeric GSI":   {"PK": "p", "SK": "s", "GSI2PK": "g", "GSI2SK": 3},
		"NaN":           {"PK": "p", "SK": "s", "x": math.NaN()},
	} {
		if err := tb.Put(ctx, it, nil); err == nil {
			t.Errorf("%s: Put accepted %v", name, it)
		}
	}
	if err := tb.Transact(ctx, nil); err == nil {
		t.Error("empty transaction accepted")
	}
}
