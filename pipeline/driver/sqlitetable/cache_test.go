package sqlitetable_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// The writer keeps the items it updated, decoded. What another handle on
// the same file (another process, in effect) writes in between must win:
// the next conditional update sees it, not the cached item.
func TestCacheSeesOtherWriters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shared.db")
	a, err := sqlitetable.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlitetable.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	k := table.Key{PK: "wf", SK: "STEP"}
	set := func(tb *sqlitetable.Table, from, to string) error {
		var cond table.Cond = table.Equals{Path: "status", Value: from}
		if from == "" {
			cond = table.NotExists{Path: table.AttrPK}
		}
		_, err := tb.Update(ctx, k, []table.Update{table.Set{Path: "status", Value: to}}, cond)
		return err
	}
	if err := set(a, "", "pending"); err != nil {
		t.Fatal(err)
	}
	if err := set(a, "pending", "running"); err != nil { // cached by a
		t.Fatal(err)
	}
	if err := set(b, "running", "failed"); err != nil {
		t.Fatal(err)
	}
	if err := set(a, "running", "completed"); err == nil {
		t.Fatal("a moved the item from running, which b had already left")
	}
	if err := set(a, "failed", "running"); err != nil {
		t.Fatalf("a does not see b's write: %v", err)
	}
	// A delete through b, then a's update must create the item afresh.
	if err := b.Delete(ctx, k, nil); err != nil {
		t.Fatal(err)
	}
	if err := set(a, "", "pending"); err != nil {
		t.Fatalf("a does not see b's delete: %v", err)
	}
}

// A cached item that expires is absent to the next transaction, as a
// stored one is.
func TestCachedItemExpires(t *testing.T) {
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
	k := table.Key{PK: "lease", SK: "L"}
	if _, err := tb.Update(ctx, k, []table.Update{table.Set{Path: "ttl", Value: 1_000_010.0}}, table.NotExists{Path: table.AttrPK}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Update(ctx, k, []table.Update{table.Set{Path: "owner", Value: "x"}}, table.NotExists{Path: table.AttrPK}); err == nil {
		t.Fatal("a live item was taken for absent")
	}
	mu.Lock()
	now = time.Unix(1_000_011, 0)
	mu.Unlock()
	it, err := tb.Update(ctx, k, []table.Update{table.Set{Path: "owner", Value: "y"}}, table.NotExists{Path: table.AttrPK})
	if err != nil {
		t.Fatalf("the expired item still counts: %v", err)
	}
	if _, hasTTL := it["ttl"]; hasTTL {
		t.Fatalf("the new item inherited the expired one's attributes: %v", it)
	}
}

// What Update returns is the caller's to change: changing it must not
// change what the next transaction reads.
func TestUpdateResultIsACopy(t *testing.T) {
	t.Parallel()
	tb := openTable(t)
	ctx := t.Context()
	k := table.Key{PK: "p", SK: "s"}
	it, err := tb.Update(ctx, k, []table.Update{table.Set{Path: "m", Value: map[string]any{"a": "1"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	it["m"].(map[string]any)["a"] = "changed"
	if _, err := tb.Update(ctx, k, []table.Update{table.Set{Path: "n", Value: 1.0}}, table.Equals{Path: "m.a", Value: "1"}); err != nil {
		t.Fatalf("the caller's change reached the table: %v", err)
	}
}
