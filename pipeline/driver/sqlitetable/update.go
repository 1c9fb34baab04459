package sqlitetable

import (
	"context"

	"github.com/docpipe/docpipe/pipeline/table"
)

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
