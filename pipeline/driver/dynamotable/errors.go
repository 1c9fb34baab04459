package dynamotable

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/docpipe/docpipe/pipeline/table"
)

// conditionFailed is the one place a failed condition is recognised: the
// error code of a plain write and the reason code of an action inside a
// canceled transaction.
func conditionFailed(code string) bool {
	return code == "ConditionalCheckFailedException" || code == "ConditionalCheckFailed"
}

// conflicted recognises a write that lost to a concurrent transaction, as an
// error code or a cancellation reason.
func conflicted(code string) bool {
	switch code {
	case "TransactionConflictException", "TransactionConflict", "TransactionInProgressException":
		return true
	}
	return false
}

// invalidMarkers are fragments of DynamoDB's validation messages that mean
// the update or item does not fit the stored item or the key schema: the
// cases table.Apply rejects but only the stored item can reveal.
var invalidMarkers = []string{
	"document path",          // SET below a missing parent
	"incorrect data type",    // ADD on a non-number
	"Incorrect operand type", // arithmetic (our Add) on a non-number
	"overlap",                // two updates on overlapping paths
	"part of the key",        // changing PK or SK
	"Type mismatch",          // index key of the wrong type
	"Item size has exceeded", // over 400 KB
	"exceeds the maximum",
}

// invalid recognises an update or item DynamoDB refused for its shape.
func invalid(code, msg string) bool {
	if code != "ValidationException" && code != "ValidationError" {
		return false
	}
	for _, m := range invalidMarkers {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// interpretError maps DynamoDB errors onto the table sentinels, keeping the
// original error in the chain for logs.
func interpretError(op string, err error) error {
	if err == nil {
		return nil
	}
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		return interpretCancel(op, canceled)
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		code := api.ErrorCode()
		switch {
		case conditionFailed(code):
			return fmt.Errorf("dynamotable: %s: %w", op, table.ErrConditionFailed)
		case conflicted(code):
			return fmt.Errorf("dynamotable: %s: %w: %w", op, table.ErrTransactionConflict, err)
		case invalid(code, api.ErrorMessage()):
			return fmt.Errorf("dynamotable: %s: %w: %s", op, table.ErrInvalidUpdate, api.ErrorMessage())
		}
	}
	return fmt.Errorf("dynamotable: %s: %w", op, err)
}

// interpretCancel reads the per-action reasons of a canceled transaction. A
// failed condition wins over a conflict: retrying cannot make it hold.
func interpretCancel(op string, e *types.TransactionCanceledException) error {
	failed := make([]bool, len(e.CancellationReasons))
	anyFailed, anyConflict := false, false
	var invalidMsg string
	for i, r := range e.CancellationReasons {
		code, msg := aws.ToString(r.Code), aws.ToString(r.Message)
		switch {
		case conditionFailed(code):
			failed[i], anyFailed = true, true
		case conflicted(code):
			anyConflict = true
		case code == "ValidationError" && invalidMsg == "":
			invalidMsg = fmt.Sprintf("action %d: %s", i, msg)
		}
	}
	switch {
	case anyFailed:
		return fmt.Errorf("dynamotable: %s: %w", op, &table.TxCanceledError{Failed: failed})
	case anyConflict:
		return fmt.Errorf("dynamotable: %s: %w: %w", op, table.ErrTransactionConflict, e)
	case invalidMsg != "":
		return fmt.Errorf("dynamotable: %s: %w: %s", op, table.ErrInvalidUpdate, invalidMsg)
	}
	return fmt.Errorf("dynamotable: %s: %w", op, e)
}

func asTxCanceled(err error) (*table.TxCanceledError, bool) {
	var txe *table.TxCanceledError
	ok := errors.As(err, &txe)
	return txe, ok
}
