package dynamotable

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Transact applies up to table.MaxTransactItems actions with one
// TransactWriteItems call. The SDK gives the call an idempotency token that
// its retries reuse, so on DynamoDB a retried request that already
// committed is not applied twice. Where that token is not honoured, each
// Update also writes the call's write token, so a resend fails rather than
// applying twice, and a resend that fails against its own committed
// writes reports success (see resent.go).
func (t *Table) Transact(ctx context.Context, actions []table.TxAction) error {
	if len(actions) == 0 {
		return nil
	}
	if len(actions) > table.MaxTransactItems {
		return fmt.Errorf("%w: transaction has %d actions, at most %d allowed", table.ErrInvalidUpdate, len(actions), table.MaxTransactItems)
	}
	items := make([]types.TransactWriteItem, len(actions))
	guarded := make([]bool, len(actions))
	nows := make([]int64, len(actions))
	seen := make(map[table.Key]int, len(actions))
	token := newWriteToken()
	for i, a := range actions {
		ti, key, err := t.txItem(a, token, &guarded[i], &nows[i])
		if err != nil {
			return fmt.Errorf("dynamotable: transact action %d: %w", i, err)
		}
		// DynamoDB refuses two actions on one item; say so before the call
		// and name both actions.
		if j, dup := seen[key]; dup {
			return fmt.Errorf("%w: transaction actions %d and %d both touch %s", table.ErrInvalidUpdate, j, i, key)
		}
		seen[key] = i
		items[i] = ti
	}
	var a attempts
	_, err := t.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}, a.option)
	if txRepeatedItself(err, &a, items, token) {
		return nil
	}
	if i, ok := guardFailedInTx(err, actions, guarded, nows); ok {
		return fmt.Errorf("dynamotable: transact action %d: %w: a parent of a nested path is not a map, or an Add found a non-number", i, table.ErrInvalidUpdate)
	}
	err = interpretError("transact", err)
	// Keep Failed aligned with actions whatever the service reported.
	if txe, ok := asTxCanceled(err); ok && len(txe.Failed) != len(actions) {
		failed := make([]bool, len(actions))
		copy(failed, txe.Failed)
		txe.Failed = failed
	}
	return err
}

// txItem builds one action, an update writing token; for an update it
// reports whether the update is guarded and the time its expiry was
// judged at.
func (t *Table) txItem(a table.TxAction, token string, guarded *bool, at *int64) (types.TransactWriteItem, table.Key, error) {
	now := t.nowUnix()
	switch x := a.(type) {
	case table.TxPut:
		in, err := t.putInput(x.Item, x.Cond)
		if err != nil {
			return types.TransactWriteItem{}, table.Key{}, err
		}
		return types.TransactWriteItem{Put: &types.Put{
			TableName:                 in.TableName,
			Item:                      in.Item,
			ConditionExpression:       in.ConditionExpression,
			ExpressionAttributeNames:  in.ExpressionAttributeNames,
			ExpressionAttributeValues: in.ExpressionAttributeValues,
			// The stored item, for telling a resend from a lost race.
			ReturnValuesOnConditionCheckFailure: in.ReturnValuesOnConditionCheckFailure,
		}}, x.Item.Key(), nil
	case table.TxUpdate:
		p, err := t.updateParts(x.Key, x.Updates, x.Cond, token)
		if err != nil {
			return types.TransactWriteItem{}, table.Key{}, err
		}
		if p.update == nil {
			// A transaction's Update needs an expression; removing an
			// attribute no item has changes nothing but still upserts.
			return types.TransactWriteItem{}, table.Key{}, fmt.Errorf("%w: TxUpdate without updates", table.ErrInvalidUpdate)
		}
		*guarded, *at = p.guarded, p.now
		u := &types.Update{
			TableName:                 aws.String(t.name),
			Key:                       keyAV(x.Key),
			UpdateExpression:          p.update,
			ConditionExpression:       p.cond,
			ExpressionAttributeNames:  p.names,
			ExpressionAttributeValues: p.values,
			// The stored item, for telling a resend (its token) and a
			// failed guard from a lost race.
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}
		return types.TransactWriteItem{Update: u}, x.Key, nil
	case table.TxDelete:
		in, err := t.deleteInput(x.Key, x.Cond)
		if err != nil {
			return types.TransactWriteItem{}, table.Key{}, err
		}
		return types.TransactWriteItem{Delete: &types.Delete{
			TableName:                 in.TableName,
			Key:                       in.Key,
			ConditionExpression:       in.ConditionExpression,
			ExpressionAttributeNames:  in.ExpressionAttributeNames,
			ExpressionAttributeValues: in.ExpressionAttributeValues,
		}}, x.Key, nil
	case table.TxCheck:
		if err := checkKey(x.Key); err != nil {
			return types.TransactWriteItem{}, table.Key{}, err
		}
		expr, err := condExpr(x.Cond, now, true)
		if err != nil {
			return types.TransactWriteItem{}, table.Key{}, err
		}
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName:                 aws.String(t.name),
			Key:                       keyAV(x.Key),
			ConditionExpression:       expr.Condition(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
		}}, x.Key, nil
	case nil:
		return types.TransactWriteItem{}, table.Key{}, fmt.Errorf("%w: nil action", table.ErrInvalidUpdate)
	}
	return types.TransactWriteItem{}, table.Key{}, fmt.Errorf("%w: unknown action %T", table.ErrInvalidUpdate, a)
}

// guardFailedInTx finds a guarded update whose guard, not its caller's
// condition, canceled the transaction. Such an update is a caller bug and
// is reported as one rather than as a failed condition.
func guardFailedInTx(err error, actions []table.TxAction, guarded []bool, nows []int64) (int, bool) {
	var canceled *types.TransactionCanceledException
	if !errors.As(err, &canceled) {
		return 0, false
	}
	for i, r := range canceled.CancellationReasons {
		if i >= len(actions) || !guarded[i] || !conditionFailed(aws.ToString(r.Code)) {
			continue
		}
		if u, ok := actions[i].(table.TxUpdate); ok && guardFailed(u.Cond, nows[i], r.Item) {
			return i, true
		}
	}
	return 0, false
}
