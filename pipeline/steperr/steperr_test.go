package steperr

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// Lambda reports a Go error's type name as errorType and the state machine
// matches that name; these names are the contract with the ASL.
func TestStepErrorTypeNamesAreTheASLNames(t *testing.T) {
	for name, err := range map[string]error{
		NameTransient:         &TransientError{},
		NameInvalidDocument:   &InvalidDocumentError{},
		NameUnsupportedFormat: &UnsupportedFormatError{},
		NameTooLarge:          &TooLargeError{},
		NamePasswordProtected: &PasswordProtectedError{},
		NameInvalidInput:      &InvalidInputError{},
		NameSegmentsFailed:    &SegmentsFailedError{},
		NameStageFailed:       &StageFailedError{},
		NameUnexpected:        &UnexpectedError{},
		NameReviewPending:     &ReviewPendingError{},
	} {
		if got := reflect.TypeOf(err).Elem().Name(); got != name {
			t.Errorf("type %s is named %q in the ASL", got, name)
		}
		if got := Name(fmt.Errorf("wrapped: %w", err)); got != name {
			t.Errorf("Name(wrapped %s) = %q", name, got)
		}
		if got := reflect.TypeOf(Typed(fmt.Errorf("ctx: %w", err))).Elem().Name(); got != name {
			t.Errorf("Typed(wrapped %s) has type %s", name, got)
		}
	}
}

func TestUnclassifiedErrors(t *testing.T) {
	if got := Name(errors.New("boom")); got != NameUnexpected {
		t.Errorf("Name(plain) = %q", got)
	}
	if got := Name(fmt.Errorf("x: %w", context.DeadlineExceeded)); got != NameTransient {
		t.Errorf("Name(deadline) = %q", got)
	}
	if Name(nil) != "" || Typed(nil) != nil {
		t.Error("nil must stay nil")
	}
	err := Typed(errors.New("boom"))
	if _, ok := err.(*UnexpectedError); !ok || err.Error() != "boom" {
		t.Errorf("Typed(plain) = %#v", err)
	}
}
