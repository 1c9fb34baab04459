package steperr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/pipeline/table"
)

// Storage faults must be retried; typed and condition errors must not.
func TestStorageErrClassification(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New("503 SlowDown"), steperr.NameTransient},
		{fmt.Errorf("put: %w", errors.New("connection reset")), steperr.NameTransient},
		{fmt.Errorf("tx: %w", table.ErrConditionFailed), steperr.NameUnexpected},
		{fmt.Errorf("get: %w", table.ErrNotFound), steperr.NameInvalidInput},
		{fmt.Errorf("tx: %w", table.ErrTransactionConflict), steperr.NameTransient},
		{&steperr.InvalidDocumentError{Reason: "x"}, steperr.NameInvalidDocument},
		{&steperr.UnexpectedError{Reason: "x"}, steperr.NameUnexpected},
		{&steperr.TransientError{Reason: "x"}, steperr.NameTransient},
	} {
		if got := steperr.Name(steperr.Storage("op", tc.err)); got != tc.want {
			t.Errorf("Storage(%v) is %s, want %s", tc.err, got, tc.want)
		}
	}
	if err := steperr.Storage("op", context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("cancellation must stay cancellation, got %v", err)
	}
}
