package dynamotable

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

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
