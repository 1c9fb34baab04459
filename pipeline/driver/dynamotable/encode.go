package dynamotable

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/docpipe/docpipe/pipeline/table"
)

// indexAttrs are the attributes DynamoDB types as S because they key an
// index: present means a non-empty string.
var indexAttrs = []string{table.AttrGSI1PK, table.AttrGSI1SK, table.AttrGSI2PK, table.AttrGSI2SK}

// encodeItem checks an item against the table's key schema and marshals it.
// Values are normalised first, so the item stored is the one table.Normalize
// describes and every driver stores the same thing.
func encodeItem(item table.Item) (map[string]types.AttributeValue, error) {
	if err := checkKey(item.Key()); err != nil {
		return nil, err
	}
	norm := make(map[string]any, len(item))
	for name, v := range item {
		n, err := table.NormalizeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		norm[name] = n
	}
	for _, name := range indexAttrs {
		if v, ok := norm[name]; ok {
			if s, isStr := v.(string); !isStr || s == "" {
				return nil, fmt.Errorf("%w: index attribute %s must be a non-empty string, got %#v", table.ErrInvalidUpdate, name, v)
			}
		}
	}
	av, err := attributevalue.MarshalMap(norm)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", table.ErrInvalidUpdate, err)
	}
	return av, nil
}

// decodeItem unmarshals an item into the value set table.Item documents.
// attributevalue already decodes numbers as float64; normalising also turns
// the set and binary types, which this driver never writes but a foreign
// writer might, into []any and strings instead of leaking SDK shapes.
func decodeItem(av map[string]types.AttributeValue) (table.Item, error) {
	var raw map[string]any
	if err := attributevalue.UnmarshalMap(av, &raw); err != nil {
		return nil, fmt.Errorf("dynamotable: decode item: %w", err)
	}
	item := make(table.Item, len(raw))
	for name, v := range raw {
		if name == attrWriteToken {
			continue // the driver's own, not the item's (withWriteToken)
		}
		n, err := table.NormalizeValue(v)
		if err != nil {
			return nil, fmt.Errorf("dynamotable: decode attribute %s: %w", name, err)
		}
		item[name] = n
	}
	return item, nil
}

// encodeValue marshals one normalised value for an expression.
func encodeValue(v any) (types.AttributeValue, error) {
	n, err := table.NormalizeValue(v)
	if err != nil {
		return nil, err
	}
	av, err := attributevalue.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", table.ErrInvalidUpdate, err)
	}
	return av, nil
}

func checkKey(k table.Key) error {
	if k.PK == "" || k.SK == "" {
		return fmt.Errorf("%w: key %q needs a non-empty PK and SK", table.ErrInvalidUpdate, k.String())
	}
	return nil
}

func keyAV(k table.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		table.AttrPK: &types.AttributeValueMemberS{Value: k.PK},
		table.AttrSK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

// expired reports whether an item's ttl has passed. DynamoDB deletes expired
// items lazily (up to days later), so reads must hide them themselves.
func expired(item table.Item, now int64) bool {
	ttl, ok := item[table.AttrTTL].(float64)
	return ok && ttl <= float64(now)
}
