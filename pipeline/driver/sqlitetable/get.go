package sqlitetable

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/table"
)

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

// GetData reads one item's data attribute straight from its stored JSON
// into v (table.DataReader).
func (t *Table) GetData(ctx context.Context, key table.Key, v any) error {
	st, err := t.readStmt(ctx, selectLive)
	if err != nil {
		return fmt.Errorf("sqlitetable: get %s: %w", key, err)
	}
	var raw []byte
	if err := st.QueryRowContext(ctx, key.PK, key.SK, t.nowSeconds()).Scan(&raw); err != nil {
		return fmt.Errorf("sqlitetable: get %s: %w", key, interpretError(err))
	}
	return decodeData(key, raw, v)
}

// RowQueryer is a transaction or connection on a table's file.
type RowQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// GetDataIn reads one item's data attribute into v through db, a
// transaction on the table's file (a WriteHook's, which sees what its
// table transaction wrote), whatever its time to live.
func GetDataIn(ctx context.Context, db RowQueryer, key table.Key, v any) error {
	var raw []byte
	if err := db.QueryRowContext(ctx, `SELECT item FROM items WHERE pk = ? AND sk = ?`, key.PK, key.SK).Scan(&raw); err != nil {
		return fmt.Errorf("sqlitetable: get %s: %w", key, interpretError(err))
	}
	return decodeData(key, raw, v)
}

// decodeData decodes a stored item's data attribute into v.
func decodeData(key table.Key, raw []byte, v any) error {
	// An interface holding a pointer makes encoding/json decode into what
	// the pointer points at; the item's other attributes are skipped.
	if err := json.Unmarshal(raw, &struct {
		Data any `json:"data"`
	}{Data: v}); err != nil {
		return fmt.Errorf("sqlitetable: decode %s: %w", key, err)
	}
	return nil
}
