package sqlitetable_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// countingHook keeps, in a table of its own, how often each key was
// written and what its "v" was before; fail makes it refuse.
type countingHook struct {
	fail    bool
	befores []any
}

func (*countingHook) Schema() string {
	return `CREATE TABLE IF NOT EXISTS writes (pk TEXT PRIMARY KEY, n INTEGER NOT NULL)`
}

func (*countingHook) Statements() []string { return []string{countWrite} }

const countWrite = `INSERT INTO writes VALUES (?, 1) ON CONFLICT(pk) DO UPDATE SET n = n + 1`

func (*countingHook) ReadAhead(context.Context, []sqlitetable.Change) any { return nil }

func (h *countingHook) AfterWrite(ctx context.Context, tx *sqlitetable.HookTx, changes []sqlitetable.Change, _ any) error {
	if h.fail {
		return errors.New("hook refuses")
	}
	for _, c := range changes {
		var before any
		if c.Before != nil {
			before = c.Before["v"]
		}
		h.befores = append(h.befores, before)
		st, err := tx.Prepared(ctx, countWrite)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, c.Key.PK); err != nil {
			return err
		}
	}
	return nil
}

func writesOf(t *testing.T, path, pk string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	err = db.QueryRow(`SELECT n FROM writes WHERE pk = ?`, pk).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWriteHookCommitsWithTheTransaction(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	h := &countingHook{}
	tb, err := sqlitetable.Open(path, sqlitetable.WithWriteHook(h))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ctx := t.Context()
	if err := tb.Put(ctx, table.Item{"PK": "a", "SK": "s", "v": "one"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Update(ctx, table.Key{PK: "a", SK: "s"}, []table.Update{table.Set{Path: "v", Value: "two"}}, nil); err != nil {
		t.Fatal(err)
	}
	// A transaction whose condition fails writes nothing, and the hook
	// is not called for it.
	err = tb.Put(ctx, table.Item{"PK": "a", "SK": "s"}, table.NotExists{Path: table.AttrPK})
	if !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("conditional put over an item: %v", err)
	}
	if got := writesOf(t, path, "a"); got != 2 {
		t.Errorf("hook rows count %d writes of a, want 2", got)
	}
	if len(h.befores) != 2 || h.befores[0] != nil || h.befores[1] != "one" {
		t.Errorf("hook saw befores %v, want [<nil> one]", h.befores)
	}

	// A hook's error fails the write: neither the item nor the hook's
	// row changes.
	h.fail = true
	if err := tb.Put(ctx, table.Item{"PK": "b", "SK": "s"}, nil); err == nil {
		t.Fatal("a write whose hook failed succeeded")
	}
	if _, err := tb.Get(ctx, table.Key{PK: "b", SK: "s"}); !errors.Is(err, table.ErrNotFound) {
		t.Errorf("item of a failed hook: %v, want not found", err)
	}
}
