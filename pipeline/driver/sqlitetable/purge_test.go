package sqlitetable_test

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// Expiry follows the injected clock to the fraction of a second, and
// purging reclaims the expired item.
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
