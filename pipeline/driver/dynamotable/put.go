package dynamotable

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Put writes a whole item, replacing any item with its key, if cond holds.
func (t *Table) Put(ctx context.Context, item table.Item, cond table.Cond) error {
	in, err := t.putInput(item, cond)
	if err != nil {
		return err
	}
	var a attempts
	_, err = t.client.PutItem(ctx, in, a.option)
	if putRepeatedItself(err, &a, in.Item) {
		return nil
	}
	return interpretError("put", err)
}

func (t *Table) putInput(item table.Item, cond table.Cond) (*dynamodb.PutItemInput, error) {
	av, err := encodeItem(item)
	if err != nil {
		return nil, err
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(t.name), Item: av}
	expr, err := condExpr(cond, t.nowUnix(), false)
	if err != nil {
		return nil, err
	}
	in.ConditionExpression = expr.Condition()
	in.ExpressionAttributeNames = expr.Names()
	in.ExpressionAttributeValues = expr.Values()
	in.ReturnValuesOnConditionCheckFailure = returnOldOnFailure(cond)
	return in, nil
}
