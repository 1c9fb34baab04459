package sqlitetable

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/docpipe/docpipe/pipeline/table"
)

// generation bounds each of the writer cache's two generations. A
// workflow's items are written a dozen times in a fraction of a second and
// then rarely again: an item used while the young generation fills moves
// (or stays) there, the rest is dropped with the old generation. Two of
// 1,024 hold what 96 small documents in flight touch (about 20 items each);
// a large document writes all its segment items before the analysis
// updates each, so a generation holds a 3,000-page document's segments
// (about 1.5 KB each, decoded), which would otherwise be read and decoded
// again.
const generation = 4096

// itemCache holds, decoded, the items this writer connection wrote last,
// so that the next update of the same item needs neither a read nor a JSON
// decode. An item is cached as it was written, in an entry of its own;
// nobody mutates it afterwards (table.Apply copies its base, and callers
// get copies), so an entry's identity says "this version of the item".
//
// Only the batch holding the write lock changes the cache (the committer
// runs one batch at a time); callers peek at it, under mu, to compute
// their updates before they queue (see speculate), and the batch uses that
// work when the entry it finds is the one they started from.
type itemCache struct {
	mu         sync.Mutex
	young, old map[table.Key]*cacheEntry
	// version is SQLite's data_version when the cache was last known to be
	// right. It changes when another connection (another process, another
	// Table on the same file) commits; then anything cached may be stale.
	version int64
}

// cacheEntry is one version of an item as this writer wrote it.
type cacheEntry struct {
	item table.Item // nil: deleted
}

// validate empties the cache unless no other connection has committed
// since the last batch. It runs inside the batch's write transaction, so
// nobody can commit between the check and the batch's reads.
func (c *itemCache) validate(ctx context.Context, tx *sql.Tx) error {
	var v int64
	if err := tx.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return fmt.Errorf("sqlitetable: data version: %w", interpretError(err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v != c.version || c.young == nil {
		c.young, c.old = map[table.Key]*cacheEntry{}, nil
		c.version = v
	}
	return nil
}

// entry returns key's cached entry, or nil. Finding it in the old
// generation moves it to the young one.
func (c *itemCache) entry(key table.Key) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.young[key]; ok {
		return e
	}
	e, ok := c.old[key]
	if ok {
		delete(c.old, key)
		c.store(key, e)
	}
	return e
}

// get returns the cached item for key and its entry; cached is false when
// the cache does not know the item. An expired item is absent, as in load,
// and has no entry.
func (c *itemCache) get(key table.Key, now float64) (it table.Item, e *cacheEntry, cached bool) {
	e = c.entry(key)
	switch {
	case e == nil:
		return nil, nil, false
	case expired(e.item, now):
		return nil, nil, true
	}
	return e.item, e, true
}

// expired reports whether it carries a ttl at or before now.
func expired(it table.Item, now float64) bool {
	ttl, isNum := it[table.AttrTTL].(float64)
	return isNum && ttl <= now
}

// put records what a write left at key (nil: deleted).
func (c *itemCache) put(key table.Key, it table.Item) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.young == nil {
		return // not validated since the last reset
	}
	delete(c.old, key)
	c.store(key, &cacheEntry{item: it})
}

func (c *itemCache) store(key table.Key, e *cacheEntry) {
	if len(c.young) >= generation {
		c.old, c.young = c.young, make(map[table.Key]*cacheEntry, generation)
	}
	c.young[key] = e
}

// forget drops key's entry.
func (c *itemCache) forget(key table.Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.young, key)
	delete(c.old, key)
}

// reset forgets everything: a batch was rolled back, so the cache may hold
// writes that never committed.
func (c *itemCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.young, c.old = nil, nil
}
