package dynamotable

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Delete removes one item if cond holds; deleting a missing item without a
// condition is not an error.
func (t *Table) Delete(ctx context.Context, key table.Key, cond table.Cond) error {
	in, err := t.deleteInput(key, cond)
	if err != nil {
		return err
	}
	_, err = t.client.DeleteItem(ctx, in)
	return interpretError("delete", err)
}

func (t *Table) deleteInput(key table.Key, cond table.Cond) (*dynamodb.DeleteItemInput, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	in := &dynamodb.DeleteItemInput{TableName: aws.String(t.name), Key: keyAV(key)}
	expr, err := condExpr(cond, t.nowUnix(), false)
	if err != nil {
		return nil, err
	}
	in.ConditionExpression = expr.Condition()
	in.ExpressionAttributeNames = expr.Names()
	in.ExpressionAttributeValues = expr.Values()
	return in, nil
}
