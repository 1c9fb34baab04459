package sqlitetable

import (
	"context"
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
