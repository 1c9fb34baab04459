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

// selectManyLive reads the live items at a JSON array of [pk, sk] keys,
// each with its place in the array.
const selectManyLive = `SELECT k.key, i.item FROM json_each(?) k JOIN items i ON i.pk = json_extract(k.value, '$[0]') AND i.sk = json_extract(k.value, '$[1]') WHERE i.ttl IS NULL OR i.ttl > ?`

// GetManyData reads the items at keys in one query (table.ManyGetter).
func (t *Table) GetManyData(ctx context.Context, keys []table.Key, data func(i int) any) ([]bool, error) {
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k.PK, k.SK}
	}
	arg, err := json.Marshal(pairs)
	if err != nil {
		return nil, err
	}
	st, err := t.readStmt(ctx, selectManyLive)
	if err != nil {
		return nil, fmt.Errorf("sqlitetable: get %d items: %w", len(keys), err)
	}
	rows, err := st.QueryContext(ctx, string(arg), t.nowSeconds())
	if err != nil {
		return nil, fmt.Errorf("sqlitetable: get %d items: %w", len(keys), interpretError(err))
	}
	defer rows.Close()
	found := make([]bool, len(keys))
	for rows.Next() {
		var i int
		var raw []byte
		if err := rows.Scan(&i, &raw); err != nil {
			return nil, fmt.Errorf("sqlitetable: get %d items: %w", len(keys), interpretError(err))
		}
		if i < 0 || i >= len(keys) || found[i] {
			return nil, fmt.Errorf("sqlitetable: get %d items: place %d answered out of turn", len(keys), i)
		}
		if err := decodeData(keys[i], raw, data(i)); err != nil {
			return nil, err
		}
		found[i] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitetable: get %d items: %w", len(keys), interpretError(err))
	}
	return found, nil
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
