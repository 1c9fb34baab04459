package pipeline

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
		ErrNameTransient:         &TransientError{},
		ErrNameInvalidDocument:   &InvalidDocumentError{},
		ErrNameUnsupportedFormat: &UnsupportedFormatError{},
		ErrNameTooLarge:          &TooLargeError{},
		ErrNamePasswordProtected: &PasswordProtectedError{},
		ErrNameInvalidInput:      &InvalidInputError{},
		ErrNameSegmentsFailed:    &SegmentsFailedError{},
		ErrNameUnexpected:        &UnexpectedError{},
	} {
		if got := reflect.TypeOf(err).Elem().Name(); got != name {
			t.Errorf("type %s is named %q in the ASL", got, name)
		}
		if got := ErrorName(fmt.Errorf("wrapped: %w", err)); got != name {
			t.Errorf("ErrorName(wrapped %s) = %q", name, got)
		}
		if got := reflect.TypeOf(AsStepError(fmt.Errorf("ctx: %w", err))).Elem().Name(); got != name {
			t.Errorf("AsStepError(wrapped %s) has type %s", name, got)
		}
	}
}

func TestUnclassifiedErrors(t *testing.T) {
	if got := ErrorName(errors.New("boom")); got != ErrNameUnexpected {
		t.Errorf("ErrorName(plain) = %q", got)
	}
	if got := ErrorName(fmt.Errorf("x: %w", context.DeadlineExceeded)); got != ErrNameTransient {
		t.Errorf("ErrorName(deadline) = %q", got)
	}
	if ErrorName(nil) != "" || AsStepError(nil) != nil {
		t.Error("nil must stay nil")
	}
	err := AsStepError(errors.New("boom"))
	if _, ok := err.(*UnexpectedError); !ok || err.Error() != "boom" {
		t.Errorf("AsStepError(plain) = %#v", err)
	}
}

func TestRegistryDispatchesOnStepName(t *testing.T) {
	reg := NewRegistry()
	reg.Register("a", HandlerFunc(func(ctx context.Context, p []byte) ([]byte, error) { return []byte(`"A"`), nil }))
	out, err := reg.Invoke(context.Background(), []byte(`{"step":"a"}`))
	if err != nil || string(out) != `"A"` {
		t.Fatalf("Invoke = %s, %v", out, err)
	}
	if _, err := reg.Invoke(context.Background(), []byte(`{"step":"b"}`)); ErrorName(err) != ErrNameInvalidInput {
		t.Errorf("unknown step: err = %v", err)
	}
	if _, err := reg.Invoke(context.Background(), []byte(`not json`)); ErrorName(err) != ErrNameInvalidInput {
		t.Errorf("bad payload: err = %v", err)
	}
}
