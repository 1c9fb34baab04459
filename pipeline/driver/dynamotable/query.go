package dynamotable

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/docpipe/docpipe/pipeline/table"
)

// maxRequestLimit bounds the Limit of one request; a larger page takes
// several requests.
const maxRequestLimit = 1000

// Query reads one page of a partition in sort-key order, skipping expired
// items. DynamoDB applies Limit before the expiry filter, so Query keeps
// reading until it has Limit live items or the partition ends. It asks for
// one item more than it returns, so that Next is empty exactly when nothing
// follows, instead of leaving the caller a last, empty page.
func (t *Table) Query(ctx context.Context, q table.Query) (table.Page, error) {
	pkName, skName, err := indexKeys(q.Index)
	if err != nil {
		return table.Page{}, err
	}
	if q.SKPrefix != "" && (q.SKFrom != "" || q.SKTo != "") {
		return table.Page{}, fmt.Errorf("dynamotable: query sets both SKPrefix and a sort-key range")
	}
	if q.PK == "" || (q.SKFrom != "" && q.SKTo != "" && q.SKFrom > q.SKTo) {
		// No item has an empty key, and DynamoDB rejects an inverted
		// BETWEEN instead of matching nothing.
		return table.Page{}, nil
	}
	var start map[string]types.AttributeValue
	if !q.CountOnly {
		if start, err = decodeToken(q.PageToken); err != nil {
			return table.Page{}, err
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}

	sk := expression.Key(skName)
	kc := expression.Key(pkName).Equal(expression.Value(q.PK))
	switch {
	case q.SKPrefix != "":
		kc = kc.And(sk.BeginsWith(q.SKPrefix))
	case q.SKFrom != "" && q.SKTo != "":
		kc = kc.And(sk.Between(expression.Value(q.SKFrom), expression.Value(q.SKTo)))
	case q.SKFrom != "":
		kc = kc.And(sk.GreaterThanEqual(expression.Value(q.SKFrom)))
	case q.SKTo != "":
		kc = kc.And(sk.LessThanEqual(expression.Value(q.SKTo)))
	}
	expr, err := expression.NewBuilder().WithKeyCondition(kc).WithFilter(liveCond(t.nowUnix())).Build()
	if err != nil {
		return table.Page{}, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(t.name),
		KeyConditionExpression:    expr.KeyCondition(),
		FilterExpression:          expr.Filter(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(!q.Reverse),
		// Index reads are eventually consistent by nature; base-table
		// reads see every write that returned before them.
		ConsistentRead: aws.Bool(q.Index == table.IndexTable),
	}
	if q.Index != table.IndexTable {
		in.IndexName = aws.String(q.Index)
	}
	if q.CountOnly {
		return t.count(ctx, in, q.Limit)
	}

	var raw []map[string]types.AttributeValue
	for {
		in.ExclusiveStartKey = start
		in.Limit = aws.Int32(int32(min(limit-len(raw), maxRequestLimit-1) + 1))
		out, err := t.client.Query(ctx, in)
		if err != nil {
			return table.Page{}, interpretError("query", err)
		}
		raw = append(raw, out.Items...)
		if len(raw) > limit || out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}

	page := table.Page{}
	if len(raw) > limit {
		raw = raw[:limit]
		if page.Next, err = encodeToken(raw[limit-1], pkName, skName); err != nil {
			return table.Page{}, err
		}
	}
	page.Items = make([]table.Item, 0, len(raw))
	for _, av := range raw {
		item, err := decodeItem(av)
		if err != nil {
			return table.Page{}, err
		}
		page.Items = append(page.Items, item)
	}
	return page, nil
}

// count answers a CountOnly query with Select COUNT: DynamoDB counts the
// items that pass the expiry filter and returns none of them, one request
// per megabyte of the range read. A limit > 0 stops it there.
func (t *Table) count(ctx context.Context, in *dynamodb.QueryInput, limit int) (table.Page, error) {
	in.Select = types.SelectCount
	n := 0
	for {
		if limit > 0 {
			// Limit bounds the items read before the filter, which is at
			// least as many as pass it: never past what is still wanted.
			in.Limit = aws.Int32(int32(min(limit-n, maxRequestLimit)))
		}
		out, err := t.client.Query(ctx, in)
		if err != nil {
			return table.Page{}, interpretError("count", err)
		}
		n += int(out.Count)
		if out.LastEvaluatedKey == nil || (limit > 0 && n >= limit) {
			return table.Page{Count: n}, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// encodeToken makes the page token from the last item returned: the
// ExclusiveStartKey of the next page is that item's table and index keys,
// all strings, kept as base64 JSON so the token is opaque and URL-safe.
func encodeToken(av map[string]types.AttributeValue, pkName, skName string) (string, error) {
	key := map[string]string{}
	for _, n := range []string{table.AttrPK, table.AttrSK, pkName, skName} {
		s, ok := av[n].(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("dynamotable: item has no string %s to resume from", n)
		}
		key[n] = s.Value
	}
	b, err := json.Marshal(key)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func decodeToken(tok string) (map[string]types.AttributeValue, error) {
	if tok == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return nil, fmt.Errorf("dynamotable: invalid page token: %w", err)
	}
	var key map[string]string
	if err := json.Unmarshal(b, &key); err != nil || len(key) == 0 {
		return nil, fmt.Errorf("dynamotable: invalid page token")
	}
	av := make(map[string]types.AttributeValue, len(key))
	for k, v := range key {
		av[k] = &types.AttributeValueMemberS{Value: v}
	}
	return av, nil
}
