package dynamotable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"reflect"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/docpipe/docpipe/pipeline/table"
)

// A conditional write whose answer is lost (a connection reset after the
// service committed) is resent by the SDK's retryer, and the resend fails
// its own condition against the write it is repeating: a create reports
// "already exists" for the item it has just made. DynamoDB makes a retried
// TransactWriteItems idempotent through its ClientRequestToken, but
// PutItem has no such token, and the emulators honour neither. So a call
// counts its attempts, and a resent Put whose condition failed against an
// item equal to the one it writes reports success: the item is there,
// exactly as this call wrote it. Updates, alone or in a transaction, carry
// a write token of their own (below).

// attempts counts the attempts the SDK makes for one call.
type attempts struct{ n atomic.Int32 }

func (*attempts) ID() string { return "docpipe.attempts" }

func (a *attempts) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	a.n.Add(1)
	return next.HandleFinalize(ctx, in)
}

// option installs the counter inside the retry loop, so each attempt
// passes it.
func (a *attempts) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Finalize.Insert(a, "Retry", middleware.After)
	})
}

func (a *attempts) resent() bool { return a.n.Load() > 1 }

// sameItem reports whether stored, an item as the service returned it, is
// the item written encodes.
func sameItem(stored, written map[string]types.AttributeValue) bool {
	if stored == nil || written == nil {
		return false
	}
	s, err1 := decodeItem(stored)
	w, err2 := decodeItem(written)
	return err1 == nil && err2 == nil && reflect.DeepEqual(s, w)
}

// putRepeatedItself reports whether err, from a Put that was resent, is
// its condition failing against the item it writes.
func putRepeatedItself(err error, a *attempts, written map[string]types.AttributeValue) bool {
	var ccf *types.ConditionalCheckFailedException
	return a.resent() && errors.As(err, &ccf) && sameItem(ccf.Item, written)
}

// txRepeatedItself reports whether err, from a transaction that was
// resent, is the transaction failing against its own committed writes.
// Transactions are atomic, so one action proven applied proves them all:
// a failed Update whose item holds the call's token (no other write has
// drawn it), or else, when no action failed for another reason, failed
// conditional Puts whose items are stored exactly as they write them.
func txRepeatedItself(err error, a *attempts, items []types.TransactWriteItem, token string) bool {
	var canceled *types.TransactionCanceledException
	if !a.resent() || !errors.As(err, &canceled) || len(canceled.CancellationReasons) != len(items) {
		return false
	}
	own, other := 0, false
	for i, r := range canceled.CancellationReasons {
		code := aws.ToString(r.Code)
		switch {
		case code == "" || code == "None":
		case !conditionFailed(code):
			other = true
		case items[i].Update != nil && wroteToken(r.Item, token):
			return true
		case items[i].Put != nil && sameItem(r.Item, items[i].Put.Item):
			own++
		default:
			other = true
		}
	}
	return own > 0 && !other
}

// returnOldOnFailure asks for the stored item when a Put's condition fails,
// so the resend check can compare it; a Put without a condition cannot
// fail one.
func returnOldOnFailure(cond table.Cond) types.ReturnValuesOnConditionCheckFailure {
	if cond == nil {
		return ""
	}
	return types.ReturnValuesOnConditionCheckFailureAllOld
}

// An Update resent after its answer was lost meets the item it has
// already changed: an Add would count twice, and a conditional update
// fails the condition it just made false. So each Update writes a fresh
// random token into the item (attrWriteToken), on the condition that the
// item does not hold that token yet. A resend that fails on the token
// finds its own write there, which no Update or Put has overwritten since
// (each Update writes its own token; a Put replaces the item without
// one), and reports success with the item as its write left it. A
// transaction's Updates share one token for the call, beside DynamoDB's
// ClientRequestToken, which the emulators ignore; decodeItem hides the
// attribute.

// attrWriteToken is the attribute holding the token of the last Update.
const attrWriteToken = "_write"

// newWriteToken returns a token no other Update will draw.
func newWriteToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// withWriteToken adds the token's Set to ub and its condition to conds.
func withWriteToken(ub expression.UpdateBuilder, conds []expression.ConditionBuilder, token string) (expression.UpdateBuilder, []expression.ConditionBuilder) {
	n, v := expression.Name(attrWriteToken), expression.Value(token)
	ub = ub.Set(n, v)
	return ub, append(conds, expression.Or(expression.AttributeNotExists(n), n.NotEqual(v)))
}

// wroteToken reports whether stored, an item as the service returned it,
// holds token: the Update that drew it has been applied.
func wroteToken(stored map[string]types.AttributeValue, token string) bool {
	s, ok := stored[attrWriteToken].(*types.AttributeValueMemberS)
	return ok && token != "" && s.Value == token
}
