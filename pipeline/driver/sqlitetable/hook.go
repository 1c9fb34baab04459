package sqlitetable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/table"
)

// WriteHook keeps tables derived from the items (a search index) in step
// with them: AfterWrite runs inside the SQLite transaction that writes a
// table transaction, after its writes, so what it writes through tx
// commits or rolls back with them. An error fails the table transaction.
// It runs on the one writer, which every other write waits for: it should
// be quick, and read what it can beforehand, in ReadAhead.
type WriteHook interface {
	// Schema is run when the table opens, after the table's own.
	Schema() string
	// Statements are the queries AfterWrite runs, prepared once when the
	// table opens (HookTx.Prepared): parsing them again for every write
	// was a good part of what a small write cost the writer.
	Statements() []string
	// ReadAhead runs on the caller's goroutine before the transaction
	// joins the writer's batch, with the items it is going to write as
	// far as they are known then: an update's only when the writer's
	// cache holds its item, Before being that cached item; a put's with
	// Before nil (not known). What it returns is AfterWrite's ahead:
	// reads that need not wait in the writer.
	ReadAhead(ctx context.Context, writes []Change) (ahead any)
	AfterWrite(ctx context.Context, tx *HookTx, changes []Change, ahead any) error
}

// HookTx is the writer's transaction as AfterWrite is given it (or any
// transaction on the table's file, its statements prepared as asked).
type HookTx struct {
	*sql.Tx
	declared map[string]*sql.Stmt // prepared on the writer when the table opened
	bound    map[string]*sql.Stmt // statements of Tx, by query
}

// Prepared is query as a statement of the transaction: one the hook
// declared is bound from the table's, any other prepared once per
// transaction. It closes with the transaction.
func (h *HookTx) Prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := h.bound[query]; ok {
		return st, nil
	}
	var st *sql.Stmt
	if d, ok := h.declared[query]; ok {
		st = h.Tx.StmtContext(ctx, d)
	} else {
		var err error
		if st, err = h.Tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
	}
	if h.bound == nil {
		h.bound = map[string]*sql.Stmt{}
	}
	h.bound[query] = st
	return st, nil
}

// Change is one item a transaction wrote: Before is nil for a new item,
// After nil for a deleted one.
type Change struct {
	Key           table.Key
	Before, After table.Item
}

// WithWriteHook runs h in every write transaction.
func WithWriteHook(h WriteHook) Option { return func(c *config) { c.hook = h } }

// changes are the writes among a transaction's resolved steps. The items
// are the writer's: a hook must not change them.
func changes(steps []step) []Change {
	out := make([]Change, 0, len(steps))
	for _, s := range steps {
		if s.write {
			out = append(out, Change{Key: s.key, Before: s.before, After: s.after})
		}
	}
	return out
}

// readAhead gives the hook the writes of actions known before the batch
// (prepared puts and speculated updates) and returns what it read.
func readAhead(ctx context.Context, h WriteHook, actions []table.TxAction, puts []prepared) any {
	if h == nil || puts == nil {
		return nil
	}
	var writes []Change
	for i, p := range puts {
		if p.after == nil {
			continue
		}
		k, err := actionKey(actions[i])
		if err != nil {
			continue
		}
		writes = append(writes, Change{Key: k, Before: p.before, After: p.after})
	}
	if len(writes) == 0 {
		return nil
	}
	return h.ReadAhead(ctx, writes)
}

// openHook creates the hook's tables and prepares its statements on db,
// the writer.
func openHook(db *sql.DB, h WriteHook) (map[string]*sql.Stmt, error) {
	if h == nil {
		return nil, nil
	}
	if _, err := db.Exec(h.Schema()); err != nil {
		return nil, fmt.Errorf("write hook schema: %w", interpretError(err))
	}
	stmts := map[string]*sql.Stmt{}
	for _, q := range h.Statements() {
		st, err := db.Prepare(q)
		if err != nil {
			closeAll(stmts)
			return nil, fmt.Errorf("write hook statement %q: %w", q, interpretError(err))
		}
		stmts[q] = st
	}
	return stmts, nil
}

func closeAll(stmts map[string]*sql.Stmt) error {
	var errs []error
	for _, st := range stmts {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}
