package dynamotable

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/docpipe/docpipe/pipeline/table"
)

func reasons(codes ...string) []types.CancellationReason {
	out := make([]types.CancellationReason, len(codes))
	for i, c := range codes {
		out[i] = types.CancellationReason{Code: aws.String(c)}
	}
	return out
}

func TestInterpretError(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return fmt.Errorf("operation error DynamoDB: %w", err) }
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"condition", wrap(&types.ConditionalCheckFailedException{}), table.ErrConditionFailed},
		{"conflict", wrap(&types.TransactionConflictException{}), table.ErrTransactionConflict},
		{"in progress", wrap(&types.TransactionInProgressException{}), table.ErrTransactionConflict},
		{"tx conflict only", wrap(&types.TransactionCanceledException{CancellationReasons: reasons("None", "TransactionConflict")}), table.ErrTransactionConflict},
		{"tx condition beats conflict", wrap(&types.TransactionCanceledException{CancellationReasons: reasons("TransactionConflict", "ConditionalCheckFailed")}), table.ErrConditionFailed},
		{"tx validation", wrap(&types.TransactionCanceledException{CancellationReasons: reasons("None", "ValidationError")}), table.ErrInvalidUpdate},
		{"missing parent", wrap(&smithy.GenericAPIError{Code: "ValidationException", Message: "The document path provided in the update expression is invalid for update"}), table.ErrInvalidUpdate},
		{"add to string", wrap(&smithy.GenericAPIError{Code: "ValidationException", Message: "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: +, operand type: S"}), table.ErrInvalidUpdate},
		{"legacy add to string", wrap(&smithy.GenericAPIError{Code: "ValidationException", Message: "An operand in the update expression has an incorrect data type"}), table.ErrInvalidUpdate},
	}
	for _, tt := range tests {
		if got := interpretError("op", tt.err); !errors.Is(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}

	other := wrap(&smithy.GenericAPIError{Code: "ValidationException", Message: "1 validation error detected: Value null at 'tableName'"})
	if got := interpretError("op", other); errors.Is(got, table.ErrInvalidUpdate) || !errors.Is(got, other) {
		t.Errorf("unrelated validation error mapped to %v", got)
	}
	throttled := wrap(&types.ProvisionedThroughputExceededException{})
	if got := interpretError("op", throttled); !errors.Is(got, throttled) || errors.Is(got, table.ErrConditionFailed) {
		t.Errorf("throttling mapped to %v", got)
	}
	if interpretError("op", nil) != nil {
		t.Error("nil error mapped to non-nil")
	}
}

func TestInterpretCancelReportsEachAction(t *testing.T) {
	t.Parallel()
	err := interpretError("transact", &types.TransactionCanceledException{
		CancellationReasons: reasons("None", "ConditionalCheckFailed", "None", "ConditionalCheckFailed"),
	})
	var txe *table.TxCanceledError
	if !errors.As(err, &txe) {
		t.Fatalf("got %v, want a *TxCanceledError", err)
	}
	if want := []bool{false, true, false, true}; fmt.Sprint(txe.Failed) != fmt.Sprint(want) {
		t.Errorf("Failed = %v, want %v", txe.Failed, want)
	}
}
