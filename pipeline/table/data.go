package table

import (
	"context"
	"encoding/json"
	"fmt"
)

// DataReader is implemented by drivers that keep items as JSON text, so
// that a caller decoding an entity skips building the item's map and
// encoding it again.
type DataReader interface {
	// GetData reads the item at key as Get does (ErrNotFound when missing
	// or expired) and decodes its data attribute into v as
	// encoding/json.Unmarshal does; an item without data leaves v as it is.
	GetData(ctx context.Context, key Key, v any) error
}

// GetData reads the data attribute of the item at key into v: through the
// driver's DataReader when it has one, else from Get's item.
func GetData(ctx context.Context, t Table, key Key, v any) error {
	if dr, ok := t.(DataReader); ok {
		return dr.GetData(ctx, key, v)
	}
	it, err := t.Get(ctx, key)
	if err != nil {
		return err
	}
	return DecodeData(it, v)
}

// DecodeData decodes an item's data attribute into v as
// encoding/json.Unmarshal does.
func DecodeData(it Item, v any) error {
	b, err := json.Marshal(it.Data())
	if err != nil {
		return fmt.Errorf("table: decode %s: %w", it.Key(), err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("table: decode %s: %w", it.Key(), err)
	}
	return nil
}
