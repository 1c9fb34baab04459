package sqlitetable

import (
	"context"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Put writes a whole item if cond holds for the item it replaces.
func (t *Table) Put(ctx context.Context, item table.Item, cond table.Cond) error {
	err := t.transact(ctx, []table.TxAction{table.TxPut{Item: item, Cond: cond}}, nil)
	return single("put", item.Key(), err)
}
