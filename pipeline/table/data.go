package table

import (
	"context"
	"encoding/json"
	"errors"
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

// MaxGetMany is the most keys one GetManyData request reads (DynamoDB's
// BatchGetItem takes 100).
const MaxGetMany = 100

// ManyGetter is implemented by drivers that read many items in one
// request.
type ManyGetter interface {
	// GetManyData reads the items at keys (1 to MaxGetMany of them, no
	// key twice) as GetData does, decoding the data of the item at
	// keys[i] into data(i); found[i] says whether it has a live item.
	GetManyData(ctx context.Context, keys []Key, data func(i int) any) (found []bool, err error)
}

// GetManyData reads the items at keys into data(i) as GetData reads one,
// MaxGetMany to a request where the driver reads many at once (a key
// given twice is read once and decoded into each of its places): found[i]
// says whether keys[i] has a live item.
func GetManyData(ctx context.Context, t Table, keys []Key, data func(i int) any) ([]bool, error) {
	found := make([]bool, len(keys))
	mg, many := t.(ManyGetter)
	if !many {
		for i, k := range keys {
			switch err := GetData(ctx, t, k, data(i)); {
			case err == nil:
				found[i] = true
			case !errors.Is(err, ErrNotFound):
				return nil, err
			}
		}
		return found, nil
	}
	first := map[Key]int{} // where each key is read
	var distinct []Key
	var at []int
	for i, k := range keys {
		if _, seen := first[k]; !seen {
			first[k] = i
			distinct = append(distinct, k)
			at = append(at, i)
		}
	}
	for lo := 0; lo < len(distinct); lo += MaxGetMany {
		hi := min(lo+MaxGetMany, len(distinct))
		got, err := mg.GetManyData(ctx, distinct[lo:hi], func(j int) any { return data(at[lo+j]) })
		if err != nil {
			return nil, err
		}
		for j, ok := range got {
			found[at[lo+j]] = ok
		}
	}
	for i, k := range keys {
		if j := first[k]; j != i && found[j] {
			// A repeated key: decoded again from its first place's read.
			if err := copyData(data(j), data(i)); err != nil {
				return nil, err
			}
			found[i] = true
		}
	}
	return found, nil
}

// copyData decodes into dst what src, a decoded data value, holds.
func copyData(src, dst any) error {
	raw, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, dst)
}
