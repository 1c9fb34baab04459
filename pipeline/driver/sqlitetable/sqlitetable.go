// Package sqlitetable implements table.Table on one SQLite file with
// modernc.org/sqlite (pure Go, no cgo): the embedded default state store.
//
// Every item is one row: its key and index attributes in columns (so the
// base table and both GSIs are indexed ranges) and the whole item as JSON.
// Conditions and updates are evaluated in Go with table.Eval and
// table.Apply inside the write transaction. Writes go through one
// connection (SQLite has one writer anyway, and BEGIN IMMEDIATE makes other
// processes wait instead of failing mid-transaction); reads use a pool and,
// thanks to WAL, never wait for writers.
package sqlitetable

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// DefaultLimit is the page size of a query without a limit.
const DefaultLimit = 1000

const schema = `
CREATE TABLE IF NOT EXISTS items (
	pk     TEXT NOT NULL,
	sk     TEXT NOT NULL,
	gsi1pk TEXT,
	gsi1sk TEXT,
	gsi2pk TEXT,
	gsi2sk TEXT,
	ttl    REAL,
	item   TEXT NOT NULL,
	PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_gsi1_live ON items (gsi1pk, gsi1sk, ttl) WHERE gsi1pk IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_gsi2_live ON items (gsi2pk, gsi2sk, ttl) WHERE gsi2pk IS NOT NULL;
DROP INDEX IF EXISTS items_gsi1;
DROP INDEX IF EXISTS items_gsi2;
`

// The index entries carry ttl so that the expiry test, and with it a count
// over an index range, never leaves the index. Files made before that have
// items_gsi1/items_gsi2 without it; opening them builds the new indexes
// once and drops the old ones.

// Table is a table.Table on a SQLite file. Safe for concurrent use.
type Table struct {
	writer *sql.DB
	reader *sql.DB
	now    func() time.Time

	// Statements are prepared once: parsing SQL is a large share of a small
	// write's cost.
	load, upsert, insert, remove *sql.Stmt // on the writer
	mu                           sync.Mutex
	queries                      map[string]*sql.Stmt // on the reader, by SQL text

	commits     committer            // concurrent transactions share a commit
	checkpoints *checkpointer        // nil for ":memory:"
	cache       itemCache            // items the writer updated, decoded; used under commits
	hook        WriteHook            // nil: none
	hookStmts   map[string]*sql.Stmt // the hook's Statements, on the writer
}

var (
	_ table.Table      = (*Table)(nil)
	_ table.DataReader = (*Table)(nil)
)

// Option configures Open.
type Option func(*config)

type config struct {
	now  func() time.Time
	hook WriteHook
}

const (
	// busyTimeout is how long a write waits for another process holding
	// the database lock.
	busyTimeout = 10 * time.Second
)

// readers is the size of the read connection pool: a connection a core,
// and at least 4. The translated SQLite runs reads on the CPU of the
// goroutine asking, so fewer connections than cores would queue readers
// that have a core to run on.
func readers() int { return max(4, runtime.GOMAXPROCS(0)) }

// WithClock injects the clock that decides which items have expired.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// Open opens (creating if needed) the database at path. ":memory:" gives a
// private in-memory database on a single connection.
func Open(path string, opts ...Option) (*Table, error) {
	cfg := config{now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	if path == "" {
		return nil, errors.New("sqlitetable: empty path")
	}
	pragmas := []string{"foreign_keys(0)"}
	if path != ":memory:" {
		// WAL with synchronous=NORMAL survives a crash of the process; a
		// power cut may lose the last transactions, never corrupt the file.
		pragmas = append(pragmas, "journal_mode(WAL)", "synchronous(NORMAL)",
			fmt.Sprintf("wal_autocheckpoint(%d)", writerAutoCheckpoint))
	}
	writerDSN := dsn(path, pragmas...) + "&_txlock=immediate"
	writer, err := sql.Open("sqlite", writerDSN)
	if err != nil {
		return nil, interpretError(err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if _, err := writer.Exec(schema); err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlitetable: open %s: %w", path, interpretError(err))
	}
	hookStmts, err := openHook(writer, cfg.hook)
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlitetable: open %s: %w", path, err)
	}
	t := &Table{writer: writer, reader: writer, now: cfg.now, queries: map[string]*sql.Stmt{}, hook: cfg.hook, hookStmts: hookStmts}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&t.load, selectLive},
		{&t.upsert, `INSERT OR REPLACE INTO items (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, ttl, item) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
		{&t.insert, `INSERT INTO items (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, ttl, item) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
		{&t.remove, `DELETE FROM items WHERE pk = ? AND sk = ?`},
	} {
		if *p.stmt, err = writer.Prepare(p.sql); err != nil {
			writer.Close()
			return nil, fmt.Errorf("sqlitetable: open %s: %w", path, interpretError(err))
		}
	}
	if path == ":memory:" {
		return t, nil
	}
	reader, err := sql.Open("sqlite", dsn(path, "query_only(1)"))
	if err != nil {
		writer.Close()
		return nil, interpretError(err)
	}
	reader.SetMaxOpenConns(readers())
	reader.SetMaxIdleConns(readers())
	t.reader = reader
	ckpt, err := sql.Open("sqlite", dsn(path, "synchronous(NORMAL)"))
	if err != nil {
		reader.Close()
		writer.Close()
		return nil, interpretError(err)
	}
	ckpt.SetMaxOpenConns(1)
	ckpt.SetMaxIdleConns(1)
	t.checkpoints = startCheckpointer(ckpt)
	return t, nil
}

// dsn is the driver's name for the database at path with these pragmas;
// every connection waits busyTimeout for another process's lock.
func dsn(path string, pragmas ...string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	return "file:" + path + "?" + q.Encode()
}

// Close closes the database.
func (t *Table) Close() error {
	t.mu.Lock()
	errs := []error{t.load.Close(), t.upsert.Close(), t.insert.Close(), t.remove.Close(), closeAll(t.hookStmts)}
	for _, st := range t.queries {
		errs = append(errs, st.Close())
	}
	t.queries = map[string]*sql.Stmt{}
	t.mu.Unlock()
	errs = append(errs, t.checkpoints.close())
	if t.reader != t.writer {
		errs = append(errs, t.reader.Close())
	}
	return errors.Join(append(errs, t.writer.Close())...)
}

// selectLive reads one item unless it has expired.
const selectLive = `SELECT item FROM items WHERE pk = ? AND sk = ? AND (ttl IS NULL OR ttl > ?)`

// readStmt returns the prepared reader statement for query.
func (t *Table) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st, ok := t.queries[query]; ok {
		return st, nil
	}
	st, err := t.reader.PrepareContext(ctx, query)
	if err != nil {
		return nil, interpretError(err)
	}
	t.queries[query] = st
	return st, nil
}

func (t *Table) nowSeconds() float64 {
	return float64(t.now().UnixNano()) / 1e9
}

func unmarshalItem(raw string) (table.Item, error) {
	var it table.Item
	if err := json.Unmarshal([]byte(raw), &it); err != nil {
		return nil, fmt.Errorf("sqlitetable: corrupt item: %w", err)
	}
	return it, nil
}
