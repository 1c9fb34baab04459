package dynamotable

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Update applies updates to one item, creating it when missing, if cond
// holds, and returns the item as written. An expired item DynamoDB has not
// deleted yet is missing to cond, but the updates still apply to its
// attributes: a single request cannot replace it and update it at once.
// A Remove below a missing parent fails with table.ErrInvalidUpdate, as
// DynamoDB refuses it.
func (t *Table) Update(ctx context.Context, key table.Key, updates []table.Update, cond table.Cond) (table.Item, error) {
	token := ""
	if len(updates) > 0 {
		token = newWriteToken()
	}
	p, err := t.updateParts(key, updates, cond, token)
	if err != nil {
		return nil, err
	}
	var a attempts
	out, err := t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(t.name),
		Key:                       keyAV(key),
		UpdateExpression:          p.update,
		ConditionExpression:       p.cond,
		ExpressionAttributeNames:  p.names,
		ExpressionAttributeValues: p.values,
		ReturnValues:              types.ReturnValueAllNew,
		// The item that failed the condition comes back at no extra cost;
		// guardFailed needs it to tell a caller's condition from a guard.
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, a.option)
	var ccf *types.ConditionalCheckFailedException
	if a.resent() && errors.As(err, &ccf) && wroteToken(ccf.Item, token) {
		// An earlier attempt applied this update: the item is as it left it.
		return decodeItem(ccf.Item)
	}
	if p.guarded && errors.As(err, &ccf) && guardFailed(cond, p.now, ccf.Item) {
		return nil, fmt.Errorf("dynamotable: update %s: %w: a parent of a nested path is not a map, or an Add found a non-number", key, table.ErrInvalidUpdate)
	}
	if err != nil {
		return nil, interpretError("update", err)
	}
	if out.Attributes == nil {
		// Only an update with nothing to change on a missing item gets
		// here; DynamoDB then writes the bare key.
		return table.Item{table.AttrPK: key.PK, table.AttrSK: key.SK}, nil
	}
	return decodeItem(out.Attributes)
}

// updateParts is an update's expressions, shared by UpdateItem and a
// transaction's Update.
type updateParts struct {
	update, cond *string
	names        map[string]string
	values       map[string]types.AttributeValue
	guarded      bool  // cond includes buildUpdate's guards
	now          int64 // the time expiry was judged at
}

// updateParts builds the expressions; a non-empty token is written with
// the updates, on the condition that the item does not carry it already
// (withWriteToken).
func (t *Table) updateParts(key table.Key, updates []table.Update, cond table.Cond, token string) (updateParts, error) {
	p := updateParts{now: t.nowUnix()}
	if err := checkKey(key); err != nil {
		return p, err
	}
	ub, guards, err := buildUpdate(updates)
	if err != nil {
		return p, err
	}
	cb, hasCond, err := writeCond(cond, p.now, false)
	if err != nil {
		return p, err
	}
	conds := guards
	if hasCond {
		conds = append([]expression.ConditionBuilder{cb}, guards...)
	}
	if token != "" {
		ub, conds = withWriteToken(ub, conds, token)
	}
	if len(updates) == 0 && len(conds) == 0 {
		return p, nil
	}
	b := expression.NewBuilder()
	if len(updates) > 0 {
		b = b.WithUpdate(ub)
	}
	switch len(conds) {
	case 0:
	case 1:
		b = b.WithCondition(conds[0])
	default:
		b = b.WithCondition(expression.And(conds[0], conds[1], conds[2:]...))
	}
	expr, err := b.Build()
	if err != nil {
		return p, err
	}
	p.update, p.cond, p.names, p.values = expr.Update(), expr.Condition(), expr.Names(), expr.Values()
	p.guarded = len(guards) > 0
	return p, nil
}

// guardFailed reports whether a guarded update that failed its condition
// failed on a guard rather than on the caller's condition: the caller's
// condition holds on the item as DynamoDB saw it (av, nil for a missing
// item; an expired item counts as missing, as in writeCond).
func guardFailed(cond table.Cond, now int64, av map[string]types.AttributeValue) bool {
	var item table.Item
	if av != nil {
		it, err := decodeItem(av)
		if err != nil {
			return false
		}
		if !expired(it, now) {
			item = it
		}
	}
	holds, err := table.Eval(cond, item)
	return err == nil && holds
}
