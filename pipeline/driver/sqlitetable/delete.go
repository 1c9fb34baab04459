package sqlitetable

import (
	"context"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Delete removes one item if cond holds; a missing item is not an error.
func (t *Table) Delete(ctx context.Context, key table.Key, cond table.Cond) error {
	err := t.transact(ctx, []table.TxAction{table.TxDelete{Key: key, Cond: cond}}, nil)
	return single("delete", key, err)
}
