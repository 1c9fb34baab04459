package sqlitetable

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/table"
)

// maxCached bounds the writer's item cache. A workflow's step item is
// updated a dozen times in a few milliseconds and then rarely again, so a
// small cache holds the items in flight; when it fills it is emptied. (At
// 4,096 the cache cost 1,000 small documents 28 MB more peak RSS and
// saved no time.)
const maxCached = 512

// itemCache holds, decoded, the items this writer connection updated last,
// so that the next update of the same item needs neither a read nor a JSON
// decode. Only the batch that holds the write lock touches it (the
// committer runs one batch at a time). An item is cached as it was
// written; nobody mutates it afterwards (table.Apply copies its base, and
// Update hands its caller a copy).
type itemCache struct {
	items map[table.Key]table.Item
	// version is SQLite's data_version when the cache was last known to be
	// right. It changes when another connection (another process, another
	// Table on the same file) commits; then anything cached may be stale.
	version int64
}

// validate empties the cache unless no other connection has committed
// since the last batch. It runs inside the batch's write transaction, so
// nobody can commit between the check and the batch's reads.
func (c *itemCache) validate(ctx context.Context, tx *sql.Tx) error {
	var v int64
	if err := tx.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return fmt.Errorf("sqlitetable: data version: %w", interpretError(err))
	}
	if v != c.version || c.items == nil {
		c.items = map[table.Key]table.Item{}
		c.version = v
	}
	return nil
}

// get returns the cached item for key, and whether there was one. An
// expired item is absent, as in load.
func (c *itemCache) get(key table.Key, now float64) (table.Item, bool) {
	it, ok := c.items[key]
	if !ok {
		return nil, false
	}
	if ttl, isNum := it[table.AttrTTL].(float64); isNum && ttl <= now {
		return nil, true
	}
	return it, true
}

// put records what a write left at key (nil: deleted).
func (c *itemCache) put(key table.Key, it table.Item) {
	if len(c.items) >= maxCached {
		clear(c.items)
	}
	c.items[key] = it
}

// forget drops key's entry.
func (c *itemCache) forget(key table.Key) { delete(c.items, key) }

// reset forgets everything: a batch was rolled back, so the cache may hold
// writes that never committed.
func (c *itemCache) reset() { c.items = nil }
