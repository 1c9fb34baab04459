package sqlitetable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/internal/jsonvalue"
	"github.com/docpipe/docpipe/pipeline/table"
)

// Transact applies actions atomically. Every condition is evaluated against
// the state before the transaction; if any fails nothing is written and a
// *table.TxCanceledError marks which.
func (t *Table) Transact(ctx context.Context, actions []table.TxAction) error {
	return t.transact(ctx, actions, nil)
}

// step is one action resolved against the current state.
type step struct {
	key    table.Key
	write  bool       // false: a check, nothing to write
	before table.Item // the item before, for a WriteHook; nil for a put on an absent key
	after  table.Item // nil with write: delete
	raw    string     // after as JSON, when it was encoded before the batch
	// absent marks a put on condition that no item has its key: the
	// condition is left to the INSERT, which fails on an existing row,
	// instead of a read first (see insertAbsent).
	absent bool
	cond   table.Cond
}

// prepared is an action's work done by the caller before the batch, so
// that the writer, which every transaction waits for, mostly compares and
// writes. A put's item is normalized, checked and encoded. An update is
// computed on the item the writer's cache holds (base), if any: its
// condition evaluated, the new item built and encoded; the batch uses that
// when base is still the item's current version, and computes it again
// otherwise.
type prepared struct {
	after  table.Item
	raw    string
	base   *cacheEntry // an update computed on this version of the item
	before table.Item  // base's item as it was read then
	holds  bool        // and its condition held on it
}

// prepare readies the actions; those with nothing to prepare get a zero
// entry.
func (t *Table) prepare(actions []table.TxAction) ([]prepared, error) {
	var out []prepared
	now := t.nowSeconds()
	for i, a := range actions {
		if u, ok := a.(table.TxUpdate); ok {
			if p, ok := t.speculate(u, now); ok {
				if out == nil {
					out = make([]prepared, len(actions))
				}
				out[i] = p
			}
			continue
		}
		put, ok := a.(table.TxPut)
		if !ok {
			continue
		}
		if out == nil {
			out = make([]prepared, len(actions))
		}
		n, err := table.NormalizeValue(map[string]any(put.Item))
		if err != nil {
			return nil, fmt.Errorf("sqlitetable: action %d: %w", i, err)
		}
		m, _ := n.(map[string]any)
		if err := validate(m); err != nil {
			return nil, fmt.Errorf("sqlitetable: action %d: %w", i, err)
		}
		raw, err := jsonvalue.Append(make([]byte, 0, 512), m, false)
		if err != nil {
			return nil, fmt.Errorf("sqlitetable: encode %s: %w", put.Item.Key(), err)
		}
		out[i] = prepared{after: table.Item(m), raw: string(raw)}
	}
	return out, nil
}

// speculate computes update u on the cached version of its item; ok is
// false when the cache does not hold it, or the update fails (the batch
// then reports the failure).
func (t *Table) speculate(u table.TxUpdate, now float64) (p prepared, ok bool) {
	cur, e, _ := t.cache.get(u.Key, now)
	if e == nil || cur == nil {
		return p, false
	}
	holds, err := table.Eval(u.Cond, cur)
	if err != nil {
		return p, false
	}
	if !holds {
		return prepared{base: e}, true
	}
	after, err := table.Apply(cur, u.Updates)
	if err != nil || validate(after) != nil {
		return p, false
	}
	raw, err := jsonvalue.Append(make([]byte, 0, 1024), map[string]any(after), false)
	if err != nil {
		return p, false
	}
	return prepared{after: after, raw: string(raw), base: e, before: cur, holds: true}, true
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
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlitetable: begin: %w", err)
	}
	puts, err := t.prepare(actions)
	if err != nil {
		return err
	}
	p := &pending{ctx: ctx, actions: actions, puts: puts, ahead: readAhead(ctx, t.hook, actions, puts), done: make(chan struct{}), lead: make(chan struct{}, 1)}
	t.commits.submit(p, t.commitBatch)
	if p.err != nil {
		return p.err
	}
	if results != nil {
		// The writer's cache keeps the items it wrote: the caller gets
		// copies it may change.
		for i, it := range p.after {
			p.after[i] = table.DeepCopy(it)
		}
		results(p.after)
	}
	return nil
}

// commitBatch runs the transactions of batch, in order, inside one SQLite
// transaction, so that they share its begin, its commit and the WAL frames
// of the pages they have in common. Each one still sees the writes of
// those before it, evaluates its own conditions and, when one fails, writes
// nothing and fails alone: conditions are all checked before any of its
// writes. A write or commit error is the database's, not a condition's:
// the batch is rolled back and, when it held several, they are run again
// one by one so that each gets its own outcome.
func (t *Table) commitBatch(batch []*pending) {
	ctx := context.Background() // each member's own context is checked before its turn
	fail := func(err error) {
		for _, p := range batch {
			p.err, p.after = err, nil
		}
	}
	tx, err := t.writer.BeginTx(ctx, nil)
	if err != nil {
		fail(fmt.Errorf("sqlitetable: begin: %w", interpretError(err)))
		return
	}
	defer tx.Rollback() // no-op after Commit
	if err := t.cache.validate(ctx, tx); err != nil {
		fail(err)
		return
	}
	stmts := txStmts{
		cache:  &t.cache,
		load:   tx.StmtContext(ctx, t.load),
		upsert: tx.StmtContext(ctx, t.upsert),
		insert: tx.StmtContext(ctx, t.insert),
		remove: tx.StmtContext(ctx, t.remove),
	}
	hookTx := &HookTx{Tx: tx, declared: t.hookStmts}
	now := t.nowSeconds()
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.err = fmt.Errorf("sqlitetable: begin: %w", err)
			continue
		}
		steps, err := resolveAll(ctx, stmts, now, p.actions, p.puts)
		if err != nil {
			p.err = err
			continue
		}
		failed, err := insertAbsent(ctx, stmts, now, steps)
		if err == nil && failed >= 0 {
			p.err = canceledAt(len(steps), failed)
			continue
		}
		if err == nil {
			for _, s := range steps {
				if s.absent {
					continue // written by insertAbsent
				}
				if err = writeStep(ctx, stmts, s); err != nil {
					break
				}
			}
		}
		if err == nil && t.hook != nil {
			err = t.hook.AfterWrite(ctx, hookTx, changes(steps), p.ahead)
		}
		if err != nil {
			tx.Rollback()
			t.cache.reset()
			if len(batch) == 1 {
				fail(err)
				return
			}
			for _, p := range batch {
				p.err, p.after = nil, nil
				t.commitBatch([]*pending{p})
			}
			return
		}
		p.after = make([]table.Item, len(steps))
		for i, s := range steps {
			p.after[i] = s.after
		}
	}
	if err := tx.Commit(); err != nil {
		t.cache.reset()
		fail(fmt.Errorf("sqlitetable: commit: %w", interpretError(err)))
		return
	}
	t.checkpoints.committed()
}

// resolveAll evaluates every action of one transaction against the current
// state before anything is written; a failed condition cancels it whole.
func resolveAll(ctx context.Context, stmts txStmts, now float64, actions []table.TxAction, puts []prepared) ([]step, error) {
	steps := make([]step, len(actions))
	failed := make([]bool, len(actions))
	anyFailed := false
	for i, a := range actions {
		var put prepared
		if puts != nil {
			put = puts[i]
		}
		s, ok, err := resolve(ctx, stmts, now, a, put)
		if err != nil {
			return nil, fmt.Errorf("sqlitetable: action %d: %w", i, err)
		}
		steps[i], failed[i] = s, !ok
		anyFailed = anyFailed || !ok
	}
	if anyFailed {
		// The puts whose condition the INSERT would have checked are
		// checked here, so that the error names every failed action.
		for i, s := range steps {
			if s.absent {
				cur, err := load(ctx, stmts, now, s.key)
				if err != nil {
					return nil, fmt.Errorf("sqlitetable: action %d: %w", i, err)
				}
				failed[i] = cur != nil
			}
		}
		return nil, &table.TxCanceledError{Failed: failed}
	}
	return steps, nil
}

// canceledAt is the cancellation of an n-action transaction whose action
// i found its condition false.
func canceledAt(n, i int) error {
	failed := make([]bool, n)
	failed[i] = true
	return &table.TxCanceledError{Failed: failed}
}

// insertAbsent writes a transaction's puts that must not replace an item
// (an audit record, a new workflow's items), before its other writes. Each
// is an INSERT: on a fresh key, the common case, that costs no read. When
// the key's row exists, the condition is evaluated on it (an expired item
// counts as absent, and is replaced); if it fails, the rows inserted
// before it are deleted again, and failed is that action's index. An
// error is the database's, as writeStep's.
func insertAbsent(ctx context.Context, tx txStmts, now float64, steps []step) (failed int, err error) {
	var inserted []table.Key
	for i, s := range steps {
		if !s.absent {
			continue
		}
		ok, err := insertRow(ctx, tx, s)
		if err != nil {
			return -1, err
		}
		if ok {
			tx.cache.put(s.key, s.after)
		} else {
			cur, err := load(ctx, tx, now, s.key)
			if err != nil {
				return -1, err
			}
			holds, err := table.Eval(s.cond, cur)
			if err != nil {
				return -1, err
			}
			if !holds {
				for _, k := range inserted {
					tx.cache.forget(k)
					if _, err := tx.remove.ExecContext(ctx, k.PK, k.SK); err != nil {
						return -1, fmt.Errorf("sqlitetable: undo %s: %w", k, interpretError(err))
					}
				}
				return i, nil
			}
			if err := writeStep(ctx, tx, s); err != nil { // replaces the expired row
				return -1, err
			}
		}
		inserted = append(inserted, s.key)
	}
	return -1, nil
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
// A put arrives prepared (put); its item does not depend on the current one.
func resolve(ctx context.Context, tx txStmts, now float64, a table.TxAction, put prepared) (s step, ok bool, err error) {
	key, _ := actionKey(a)
	if x, ok := a.(table.TxPut); ok && onlyIfAbsent(x.Cond) {
		return step{key: key, write: true, after: put.after, raw: put.raw, absent: true, cond: x.Cond}, true, nil
	}
	cur, e, err := loadEntry(ctx, tx, now, key)
	if err != nil {
		return step{}, false, err
	}
	if _, isUpdate := a.(table.TxUpdate); isUpdate && e != nil && e == put.base {
		// The caller computed this update on the version still current.
		if !put.holds {
			return step{}, false, nil
		}
		return step{key: key, write: true, before: cur, after: put.after, raw: put.raw}, true, nil
	}
	holds, err := table.Eval(actionCond(a), cur)
	if err != nil || !holds {
		return step{}, false, err
	}
	s = step{key: key, write: true, before: cur}
	switch x := a.(type) {
	case table.TxPut:
		s.after, s.raw = put.after, put.raw
	case table.TxUpdate:
		base := cur
		if base == nil {
			base = table.Item{table.AttrPK: key.PK, table.AttrSK: key.SK}
		}
		if s.after, err = table.Apply(base, x.Updates); err != nil {
			return step{}, false, err
		}
		if err := validate(s.after); err != nil {
			return step{}, false, err
		}
	case table.TxCheck:
		s.write = false
	}
	return s, true, nil
}

// onlyIfAbsent reports whether cond is "no item has this key".
func onlyIfAbsent(cond table.Cond) bool {
	c, ok := cond.(table.NotExists)
	return ok && (c.Path == table.AttrPK || c.Path == table.AttrSK)
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

// load reads the current item inside the transaction, from the writer's
// cache when it holds it; an expired item is treated as absent.
func load(ctx context.Context, tx txStmts, now float64, key table.Key) (table.Item, error) {
	it, _, err := loadEntry(ctx, tx, now, key)
	return it, err
}

// loadEntry is load that also returns the item's cache entry, nil when it
// was not cached.
func loadEntry(ctx context.Context, tx txStmts, now float64, key table.Key) (table.Item, *cacheEntry, error) {
	if it, e, cached := tx.cache.get(key, now); cached {
		return it, e, nil
	}
	var raw string
	err := tx.load.QueryRowContext(ctx, key.PK, key.SK, now).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, interpretError(err)
	}
	it, err := unmarshalItem(raw)
	return it, nil, err
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

// txStmts are the writer's prepared statements bound to one transaction,
// and the writer's item cache.
type txStmts struct {
	load, upsert, insert, remove *sql.Stmt
	cache                        *itemCache
}

// writeStep writes one resolved action and keeps the cache in step: a put
// or updated item is cached as written, a deleted one forgotten.
func writeStep(ctx context.Context, tx txStmts, s step) error {
	if !s.write {
		return nil
	}
	if s.after != nil {
		tx.cache.put(s.key, s.after)
	} else {
		tx.cache.forget(s.key)
	}
	if s.after == nil {
		if _, err := tx.remove.ExecContext(ctx, s.key.PK, s.key.SK); err != nil {
			return fmt.Errorf("sqlitetable: delete %s: %w", s.key, interpretError(err))
		}
		return nil
	}
	args, err := rowArgs(s)
	if err != nil {
		return err
	}
	if _, err := tx.upsert.ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("sqlitetable: write %s: %w", s.key, interpretError(err))
	}
	return nil
}

// insertRow writes s's item as a new row; ok is false when a row with its
// key exists (and nothing was written).
func insertRow(ctx context.Context, tx txStmts, s step) (ok bool, err error) {
	args, err := rowArgs(s)
	if err != nil {
		return false, err
	}
	_, err = tx.insert.ExecContext(ctx, args...)
	switch {
	case err == nil:
		return true, nil
	case isConstraint(err):
		return false, nil
	}
	return false, fmt.Errorf("sqlitetable: write %s: %w", s.key, interpretError(err))
}

// rowArgs are the column values of s's item, in the order the upsert and
// insert statements take them.
func rowArgs(s step) ([]any, error) {
	raw := s.raw
	if raw == "" {
		b, err := jsonvalue.Append(make([]byte, 0, 512), map[string]any(s.after), false)
		if err != nil {
			return nil, fmt.Errorf("sqlitetable: encode %s: %w", s.key, err)
		}
		raw = string(b)
	}
	g1pk, g1sk := indexKeys(s.after, table.AttrGSI1PK, table.AttrGSI1SK)
	g2pk, g2sk := indexKeys(s.after, table.AttrGSI2PK, table.AttrGSI2SK)
	var ttl any
	if f, ok := s.after[table.AttrTTL].(float64); ok {
		ttl = f // a ttl that is not a number never expires, as on DynamoDB
	}
	return []any{s.key.PK, s.key.SK, g1pk, g1sk, g2pk, g2sk, ttl, raw}, nil
}
