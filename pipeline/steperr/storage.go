package steperr

import (
	"context"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Storage classifies a table or blob failure during a step. An error that
// already carries a step error type keeps it; a lost condition race is a
// bug or a race this step cannot win (unexpected, not retried);
// cancellation stays as it is; anything else — network faults,
// throttling, 5xx — is transient and worth a retry.
func Storage(what string, err error) error {
	var unexpected *UnexpectedError
	switch {
	case Name(err) != NameUnexpected || errors.As(err, &unexpected):
		return err
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, table.ErrConditionFailed):
		return &UnexpectedError{Reason: fmt.Sprintf("%s: %v", what, err)}
	case errors.Is(err, table.ErrNotFound):
		return &InvalidInputError{Reason: fmt.Sprintf("%s: %v", what, err)}
	}
	return &TransientError{Reason: fmt.Sprintf("%s: %v", what, err)}
}
