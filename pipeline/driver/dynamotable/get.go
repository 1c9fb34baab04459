package dynamotable

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Get reads one item with a strongly consistent read. An expired item is
// reported as missing even while DynamoDB still holds it.
func (t *Table) Get(ctx context.Context, key table.Key) (table.Item, error) {
	if key.PK == "" || key.SK == "" {
		return nil, fmt.Errorf("dynamotable: get %s: %w", key, table.ErrNotFound)
	}
	out, err := t.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(t.name),
		Key:            keyAV(key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, interpretError("get", err)
	}
	if out.Item == nil {
		return nil, fmt.Errorf("dynamotable: get %s: %w", key, table.ErrNotFound)
	}
	item, err := decodeItem(out.Item)
	if err != nil {
		return nil, err
	}
	if expired(item, t.nowUnix()) {
		return nil, fmt.Errorf("dynamotable: get %s: expired: %w", key, table.ErrNotFound)
	}
	return item, nil
}

// GetManyData reads the items at keys with BatchGetItem, strongly
// consistent as Get (table.ManyGetter). Keys DynamoDB leaves unprocessed
// (throttling) are asked for again, after a pause that grows, until the
// context ends.
func (t *Table) GetManyData(ctx context.Context, keys []table.Key, data func(i int) any) ([]bool, error) {
	at := make(map[table.Key]int, len(keys))
	ask := make([]map[string]types.AttributeValue, 0, len(keys))
	for i, k := range keys {
		if k.PK == "" || k.SK == "" {
			continue // no item has an empty key
		}
		at[k] = i
		ask = append(ask, keyAV(k))
	}
	found := make([]bool, len(keys))
	now := t.nowUnix()
	for pause := 20 * time.Millisecond; len(ask) > 0; pause = min(2*pause, time.Second) {
		out, err := t.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			t.name: {Keys: ask, ConsistentRead: aws.Bool(true)},
		}})
		if err != nil {
			return nil, interpretError("get many", err)
		}
		for _, av := range out.Responses[t.name] {
			item, err := decodeItem(av)
			if err != nil {
				return nil, err
			}
			i, ok := at[item.Key()]
			if !ok {
				return nil, fmt.Errorf("dynamotable: get many: an item %s that was not asked for", item.Key())
			}
			if expired(item, now) {
				continue
			}
			if err := table.DecodeData(item, data(i)); err != nil {
				return nil, err
			}
			found[i] = true
		}
		ask = out.UnprocessedKeys[t.name].Keys
		if len(ask) > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("dynamotable: get many: %w", context.Cause(ctx))
			case <-time.After(pause):
			}
		}
	}
	return found, nil
}
