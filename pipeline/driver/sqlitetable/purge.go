package sqlitetable

import "context"

// PurgeExpired deletes expired items, which reads already ignore; it only
// reclaims space.
func (t *Table) PurgeExpired(ctx context.Context) (int64, error) {
	res, err := t.writer.ExecContext(ctx, `DELETE FROM items WHERE ttl IS NOT NULL AND ttl <= ?`, t.nowSeconds())
	if err != nil {
		return 0, interpretError(err)
	}
	return res.RowsAffected()
}
