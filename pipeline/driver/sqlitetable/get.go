package sqlitetable

import (
	"context"
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
	// An interface holding a pointer makes encoding/json decode into what
	// the pointer points at; the item's other attributes are skipped.
	if err := json.Unmarshal(raw, &struct {
		Data any `json:"data"`
	}{Data: v}); err != nil {
		return fmt.Errorf("sqlitetable: decode %s: %w", key, err)
	}
	return nil
}
