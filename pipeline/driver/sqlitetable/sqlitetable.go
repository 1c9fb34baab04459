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
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

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
CREATE INDEX IF NOT EXISTS items_gsi1 ON items (gsi1pk, gsi1sk) WHERE gsi1pk IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_gsi2 ON items (gsi2pk, gsi2sk) WHERE gsi2pk IS NOT NULL;
`

// Table is a table.Table on a SQLite file. Safe for concurrent use.
type Table struct {
	writer *sql.DB
	reader *sql.DB
	now    func() time.Time

	// Statements are prepared once: parsing SQL is a large share of a small
	// write's cost.
	load, upsert, remove *sql.Stmt // on the writer
	mu                   sync.Mutex
	queries              map[string]*sql.Stmt // on the reader, by SQL text
}

var _ table.Table = (*Table)(nil)

// Option configures Open.
type Option func(*config)

type config struct {
	now         func() time.Time
	busyTimeout time.Duration
	readers     int
}

// WithClock injects the clock that decides which items have expired.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithBusyTimeout sets how long a write waits for another process holding
// the database lock (default 10s).
func WithBusyTimeout(d time.Duration) Option { return func(c *config) { c.busyTimeout = d } }

// WithReaders sets the size of the read connection pool (default 4).
func WithReaders(n int) Option { return func(c *config) { c.readers = n } }

// Open opens (creating if needed) the database at path. ":memory:" gives a
// private in-memory database on a single connection.
func Open(path string, opts ...Option) (*Table, error) {
	cfg := config{now: time.Now, busyTimeout: 10 * time.Second, readers: 4}
	for _, o := range opts {
		o(&cfg)
	}
	if path == "" {
		return nil, errors.New("sqlitetable: empty path")
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(0)")
	if path != ":memory:" {
		q.Add("_pragma", "journal_mode(WAL)")
		// WAL with synchronous=NORMAL survives a crash of the process; a
		// power cut may lose the last transactions, never corrupt the file.
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	writerDSN := "file:" + path + "?" + q.Encode() + "&_txlock=immediate"
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
	t := &Table{writer: writer, reader: writer, now: cfg.now, queries: map[string]*sql.Stmt{}}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&t.load, selectLive},
		{&t.upsert, `INSERT OR REPLACE INTO items (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, ttl, item) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
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
	rq := url.Values{}
	rq.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.busyTimeout.Milliseconds()))
	rq.Add("_pragma", "query_only(1)")
	reader, err := sql.Open("sqlite", "file:"+path+"?"+rq.Encode())
	if err != nil {
		writer.Close()
		return nil, interpretError(err)
	}
	reader.SetMaxOpenConns(max(cfg.readers, 1))
	reader.SetMaxIdleConns(max(cfg.readers, 1))
	t.reader = reader
	return t, nil
}

// Close closes the database.
func (t *Table) Close() error {
	t.mu.Lock()
	errs := []error{t.load.Close(), t.upsert.Close(), t.remove.Close()}
	for _, st := range t.queries {
		errs = append(errs, st.Close())
	}
	t.queries = map[string]*sql.Stmt{}
	t.mu.Unlock()
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

// interpretError maps native errors onto the table sentinels.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return table.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // primary result code
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("%w: %v", table.ErrTransactionConflict, err)
		}
	}
	return err
}

func (t *Table) nowSeconds() float64 {
	return float64(t.now().UnixNano()) / 1e9
}

// ---- reads ----

// Get reads one item; table.ErrNotFound if it is missing or expired.
func (t *Table) Get(ctx context.Context, key table.Key) (table.Item, error) {
	st, err := t.readStmt(ctx, selectLive)
	if err != nil {
		return nil, fmt.Errorf("sqlitetable: get %s: %w", key, err)
	}
	var raw string
	if err := st.QueryRowContext(ctx, key.PK, key.SK, t.nowSeconds()).Scan(&raw); err != nil {
		return nil, fmt.Errorf("sqlitetable: get %s: %w", key, interpretError(err))
	}
	return unmarshalItem(raw)
}

func unmarshalItem(raw string) (table.Item, error) {
	var it table.Item
	if err := json.Unmarshal([]byte(raw), &it); err != nil {
		return nil, fmt.Errorf("sqlitetable: corrupt item: %w", err)
	}
	return it, nil
}

// cursor is the decoded page token: the position of the last item returned.
type cursor struct {
	Index string `json:"i"`
	Part  string `json:"q"` // the queried partition, so a token cannot be replayed elsewhere
	Sort  string `json:"s"` // index sort key
	PK    string `json:"p"`
	SK    string `json:"k"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c) // a struct of strings always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(tok string, q table.Query) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Index != q.Index || c.Part != q.PK {
		return cursor{}, fmt.Errorf("sqlitetable: invalid page token for this query")
	}
	return c, nil
}

// Query reads one partition of the table or an index in sort-key order.
func (t *Table) Query(ctx context.Context, q table.Query) (table.Page, error) {
	var pkCol, skCol string
	switch q.Index {
	case table.IndexTable:
		pkCol, skCol = "pk", "sk"
	case table.IndexGSI1:
		pkCol, skCol = "gsi1pk", "gsi1sk"
	case table.IndexGSI2:
		pkCol, skCol = "gsi2pk", "gsi2sk"
	default:
		return table.Page{}, fmt.Errorf("sqlitetable: unknown index %q", q.Index)
	}
	if q.SKPrefix != "" && (q.SKFrom != "" || q.SKTo != "") {
		return table.Page{}, errors.New("sqlitetable: query has both a prefix and a range")
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	var sb strings.Builder
	args := []any{q.PK, t.nowSeconds()}
	fmt.Fprintf(&sb, "SELECT pk, sk, %s, item FROM items WHERE %s = ? AND (ttl IS NULL OR ttl > ?)", skCol, pkCol)
	if q.SKPrefix != "" {
		sb.WriteString(" AND " + skCol + " >= ?")
		args = append(args, q.SKPrefix)
		if upper, ok := prefixEnd(q.SKPrefix); ok {
			sb.WriteString(" AND " + skCol + " < ?")
			args = append(args, upper)
		}
	}
	if q.SKFrom != "" {
		sb.WriteString(" AND " + skCol + " >= ?")
		args = append(args, q.SKFrom)
	}
	if q.SKTo != "" {
		sb.WriteString(" AND " + skCol + " <= ?")
		args = append(args, q.SKTo)
	}
	// On an index, items may share a sort key: the base key breaks ties so
	// that paging is exact.
	order := skCol
	if q.Index != table.IndexTable {
		order = skCol + ", pk, sk"
	}
	cmp, dir := ">", "ASC"
	if q.Reverse {
		cmp, dir = "<", "DESC"
	}
	if q.PageToken != "" {
		c, err := decodeCursor(q.PageToken, q)
		if err != nil {
			return table.Page{}, err
		}
		if q.Index == table.IndexTable {
			sb.WriteString(" AND sk " + cmp + " ?")
			args = append(args, c.SK)
		} else {
			fmt.Fprintf(&sb, " AND (%s, pk, sk) %s (?, ?, ?)", skCol, cmp)
			args = append(args, c.Sort, c.PK, c.SK)
		}
	}
	orderBy := strings.ReplaceAll(order, ",", " "+dir+",") + " " + dir
	fmt.Fprintf(&sb, " ORDER BY %s LIMIT ?", orderBy)
	args = append(args, limit+1)

	st, err := t.readStmt(ctx, sb.String())
	if err != nil {
		return table.Page{}, fmt.Errorf("sqlitetable: query %s: %w", q.PK, err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return table.Page{}, fmt.Errorf("sqlitetable: query %s: %w", q.PK, interpretError(err))
	}
	defer rows.Close()
	var page table.Page
	var last cursor
	for rows.Next() {
		if len(page.Items) == limit {
			page.Next = encodeCursor(last)
			break
		}
		var raw string
		c := cursor{Index: q.Index, Part: q.PK}
		if err := rows.Scan(&c.PK, &c.SK, &c.Sort, &raw); err != nil {
			return table.Page{}, fmt.Errorf("sqlitetable: query %s: %w", q.PK, interpretError(err))
		}
		it, err := unmarshalItem(raw)
		if err != nil {
			return table.Page{}, err
		}
		page.Items = append(page.Items, it)
		last = c
	}
	if err := rows.Err(); err != nil {
		return table.Page{}, fmt.Errorf("sqlitetable: query %s: %w", q.PK, interpretError(err))
	}
	return page, nil
}

// prefixEnd returns the smallest string greater than every string with the
// given prefix, in byte order (SQLite's BINARY collation, DynamoDB's order).
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

// ---- writes ----

// Put writes a whole item if cond holds for the item it replaces.
func (t *Table) Put(ctx context.Context, item table.Item, cond table.Cond) error {
	err := t.transact(ctx, []table.TxAction{table.TxPut{Item: item, Cond: cond}}, nil)
	return single("put", item.Key(), err)
}

// Update applies updates to one item (creating it unless cond forbids) and
// returns the item afterwards.
func (t *Table) Update(ctx context.Context, key table.Key, updates []table.Update, cond table.Cond) (table.Item, error) {
	var after table.Item
	err := t.transact(ctx, []table.TxAction{table.TxUpdate{Key: key, Updates: updates, Cond: cond}}, func(results []table.Item) {
		after = results[0]
	})
	if err != nil {
		return nil, single("update", key, err)
	}
	return after, nil
}

// Delete removes one item if cond holds; a missing item is not an error.
func (t *Table) Delete(ctx context.Context, key table.Key, cond table.Cond) error {
	err := t.transact(ctx, []table.TxAction{table.TxDelete{Key: key, Cond: cond}}, nil)
	return single("delete", key, err)
}

// single turns a one-action transaction's cancellation into a plain
// condition failure.
func single(op string, key table.Key, err error) error {
	if err == nil {
		return nil
	}
	var tx *table.TxCanceledError
	if errors.As(err, &tx) {
		err = table.ErrConditionFailed
	}
	return fmt.Errorf("sqlitetable: %s %s: %w", op, key, err)
}

// Transact applies actions atomically. Every condition is evaluated against
// the state before the transaction; if any fails nothing is written and a
// *table.TxCanceledError marks which.
func (t *Table) Transact(ctx context.Context, actions []table.TxAction) error {
	return t.transact(ctx, actions, nil)
}

// step is one action resolved against the current state.
type step struct {
	key   table.Key
	write bool       // false: a check, nothing to write
	after table.Item // nil with write: delete
}

func (t *Table) transact(ctx context.Context, actions []table.TxAction, results func([]table.Item)) error {
	if len(actions) == 0 || len(actions) > table.MaxTransactItems {
		return fmt.Errorf("sqlitetable: a transaction takes 1 to %d actions, got %d", table.MaxTransactItems, len(actions))
	}
	keys := make(map[table.Key]bool, len(actions))
	for i, a := range actions {
		k, err := actionKey(a)
		if err != nil {
			return fmt.Errorf("sqlitetable: action %d: %w", i, err)
		}
		if keys[k] {
			return fmt.Errorf("sqlitetable: transaction touches %s twice", k)
		}
		keys[k] = true
	}

	tx, err := t.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitetable: begin: %w", interpretError(err))
	}
	defer tx.Rollback() // no-op after Commit

	stmts := txStmts{
		load:   tx.StmtContext(ctx, t.load),
		upsert: tx.StmtContext(ctx, t.upsert),
		remove: tx.StmtContext(ctx, t.remove),
	}
	now := t.nowSeconds()
	steps := make([]step, len(actions))
	failed := make([]bool, len(actions))
	anyFailed := false
	for i, a := range actions {
		s, ok, err := resolve(ctx, stmts, now, a)
		if err != nil {
			return fmt.Errorf("sqlitetable: action %d: %w", i, err)
		}
		steps[i], failed[i] = s, !ok
		anyFailed = anyFailed || !ok
	}
	if anyFailed {
		return &table.TxCanceledError{Failed: failed}
	}
	for _, s := range steps {
		if err := writeStep(ctx, stmts, s); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitetable: commit: %w", interpretError(err))
	}
	if results != nil {
		out := make([]table.Item, len(steps))
		for i, s := range steps {
			out[i] = s.after
		}
		results(out)
	}
	return nil
}

func actionKey(a table.TxAction) (table.Key, error) {
	var k table.Key
	switch x := a.(type) {
	case table.TxPut:
		k = x.Item.Key()
	case table.TxUpdate:
		k = x.Key
	case table.TxDelete:
		k = x.Key
	case table.TxCheck:
		k = x.Key
	default:
		return k, fmt.Errorf("unknown action %T", a)
	}
	if k.PK == "" || k.SK == "" {
		return k, fmt.Errorf("%w: key %q needs a non-empty PK and SK", table.ErrInvalidUpdate, k)
	}
	return k, nil
}

// resolve reads the current item, evaluates the action's condition and
// computes what to write. ok is false when the condition does not hold.
func resolve(ctx context.Context, tx txStmts, now float64, a table.TxAction) (s step, ok bool, err error) {
	key, _ := actionKey(a)
	cur, err := load(ctx, tx, now, key)
	if err != nil {
		return step{}, false, err
	}
	holds, err := table.Eval(actionCond(a), cur)
	if err != nil || !holds {
		return step{}, false, err
	}
	s = step{key: key, write: true}
	switch x := a.(type) {
	case table.TxPut:
		n, err := table.NormalizeValue(map[string]any(x.Item))
		if err != nil {
			return step{}, false, err
		}
		m, _ := n.(map[string]any)
		s.after = table.Item(m)
	case table.TxUpdate:
		base := cur
		if base == nil {
			base = table.Item{table.AttrPK: key.PK, table.AttrSK: key.SK}
		}
		if s.after, err = table.Apply(base, x.Updates); err != nil {
			return step{}, false, err
		}
	case table.TxCheck:
		s.write = false
	}
	if s.after != nil {
		if err := validate(s.after); err != nil {
			return step{}, false, err
		}
	}
	return s, true, nil
}

func actionCond(a table.TxAction) table.Cond {
	switch x := a.(type) {
	case table.TxPut:
		return x.Cond
	case table.TxUpdate:
		return x.Cond
	case table.TxDelete:
		return x.Cond
	case table.TxCheck:
		return x.Cond
	}
	return nil
}

// load reads the current item inside the transaction; an expired item is
// treated as absent.
func load(ctx context.Context, tx txStmts, now float64, key table.Key) (table.Item, error) {
	var raw string
	err := tx.load.QueryRowContext(ctx, key.PK, key.SK, now).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, interpretError(err)
	}
	return unmarshalItem(raw)
}

// validate enforces the key rules DynamoDB enforces, so a caller that
// passes here also passes there.
func validate(it table.Item) error {
	for _, a := range []string{table.AttrPK, table.AttrSK} {
		if s, ok := it[a].(string); !ok || s == "" {
			return fmt.Errorf("%w: %s must be a non-empty string", table.ErrInvalidUpdate, a)
		}
	}
	for _, a := range []string{table.AttrGSI1PK, table.AttrGSI1SK, table.AttrGSI2PK, table.AttrGSI2SK} {
		if v, ok := it[a]; ok {
			if s, isStr := v.(string); !isStr || s == "" {
				return fmt.Errorf("%w: index key %s must be a non-empty string", table.ErrInvalidUpdate, a)
			}
		}
	}
	return nil
}

// indexKeys returns an index's key columns, or NULLs when the item is not in
// that index (DynamoDB indexes only items that have both key attributes).
func indexKeys(it table.Item, pkAttr, skAttr string) (any, any) {
	pk, ok1 := it[pkAttr].(string)
	sk, ok2 := it[skAttr].(string)
	if !ok1 || !ok2 {
		return nil, nil
	}
	return pk, sk
}

// txStmts are the writer's prepared statements bound to one transaction.
type txStmts struct{ load, upsert, remove *sql.Stmt }

func writeStep(ctx context.Context, tx txStmts, s step) error {
	if !s.write {
		return nil
	}
	if s.after == nil {
		if _, err := tx.remove.ExecContext(ctx, s.key.PK, s.key.SK); err != nil {
			return fmt.Errorf("sqlitetable: delete %s: %w", s.key, interpretError(err))
		}
		return nil
	}
	raw, err := json.Marshal(s.after)
	if err != nil {
		return fmt.Errorf("sqlitetable: encode %s: %w", s.key, err)
	}
	g1pk, g1sk := indexKeys(s.after, table.AttrGSI1PK, table.AttrGSI1SK)
	g2pk, g2sk := indexKeys(s.after, table.AttrGSI2PK, table.AttrGSI2SK)
	var ttl any
	if f, ok := s.after[table.AttrTTL].(float64); ok {
		ttl = f // a ttl that is not a number never expires, as on DynamoDB
	}
	_, err = tx.upsert.ExecContext(ctx, s.key.PK, s.key.SK, g1pk, g1sk, g2pk, g2sk, ttl, string(raw))
	if err != nil {
		return fmt.Errorf("sqlitetable: write %s: %w", s.key, interpretError(err))
	}
	return nil
}

// PurgeExpired deletes expired items, which reads already ignore; it only
// reclaims space.
func (t *Table) PurgeExpired(ctx context.Context) (int64, error) {
	res, err := t.writer.ExecContext(ctx, `DELETE FROM items WHERE ttl IS NOT NULL AND ttl <= ?`, t.nowSeconds())
	if err != nil {
		return 0, interpretError(err)
	}
	return res.RowsAffected()
}
