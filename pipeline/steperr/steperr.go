// Package steperr holds the step error types. Their Go type names are the
// ASL error names that the state machine's Retry and Catch match: Lambda
// reports a Go error's type name as errorType, and the activity worker and
// the local engine send the same name. Parsers, sniffing and OCR import this
// leaf package alone, never the repository.
package steperr

import (
	"context"
	"errors"
)

// Step error types. Their Go type names are the ASL error names the state
// machine's Retry and Catch match (Lambda reports a Go error's type name as
// errorType; the activity worker and the local engine send the same name).

// TransientError is a fault worth retrying: throttling, timeouts, 5xx.
type TransientError struct{ Reason string }

// InvalidDocumentError is a corrupt, empty or otherwise unreadable file.
type InvalidDocumentError struct{ Reason string }

// UnsupportedFormatError is a file of a format docpipe does not process.
type UnsupportedFormatError struct{ Reason string }

// TooLargeError is a file over a configured limit (size, pages, expansion).
type TooLargeError struct{ Reason string }

// PasswordProtectedError is an encrypted file that needs a password.
type PasswordProtectedError struct{ Reason string }

// InvalidInputError is a malformed step payload: a wiring bug, not retried.
type InvalidInputError struct{ Reason string }

// SegmentsFailedError fails a workflow whose segments all failed.
type SegmentsFailedError struct{ Reason string }

// StageFailedError is a user's stage (a command, an HTTP service, a Lambda
// function) that ran and failed in a way its retry cannot fix: a non-zero
// exit, a 4xx answer, output that is not JSON. Its reason carries the tail
// of what the stage said about it.
type StageFailedError struct{ Reason string }

// ReviewPendingError ends a task whose review stage waits for a person.
// It is not a failure: the embedded engine parks the workflow until the
// decision (the state machine routes it to an end of its own, never to
// workflow_failed), and a Step Functions worker that stored the task token
// on the review (Callback) reports nothing, as the decision will.
type ReviewPendingError struct {
	Reason   string
	Callback bool
}

// UnexpectedError is any failure not classified above (a bug, an
// unforeseen condition). It is not retried.
type UnexpectedError struct{ Reason string }

func (e *TransientError) Error() string         { return "transient: " + e.Reason }
func (e *InvalidDocumentError) Error() string   { return "invalid document: " + e.Reason }
func (e *UnsupportedFormatError) Error() string { return "unsupported format: " + e.Reason }
func (e *TooLargeError) Error() string          { return "too large: " + e.Reason }
func (e *PasswordProtectedError) Error() string { return "password protected: " + e.Reason }
func (e *InvalidInputError) Error() string      { return "invalid step input: " + e.Reason }
func (e *SegmentsFailedError) Error() string    { return "segments failed: " + e.Reason }
func (e *StageFailedError) Error() string       { return e.Reason }
func (e *UnexpectedError) Error() string        { return e.Reason }
func (e *ReviewPendingError) Error() string     { return "waiting for review: " + e.Reason }

// ASL error names, pinned by a test against the type names.
const (
	NameTransient         = "TransientError"
	NameInvalidDocument   = "InvalidDocumentError"
	NameUnsupportedFormat = "UnsupportedFormatError"
	NameTooLarge          = "TooLargeError"
	NamePasswordProtected = "PasswordProtectedError"
	NameInvalidInput      = "InvalidInputError"
	NameSegmentsFailed    = "SegmentsFailedError"
	NameStageFailed       = "StageFailedError"
	NameUnexpected        = "UnexpectedError"
	NameReviewPending     = "ReviewPendingError"
)

// PermanentNames are the errors no retry can fix.
var PermanentNames = []string{
	NameInvalidDocument, NameUnsupportedFormat, NameTooLarge,
	NamePasswordProtected, NameInvalidInput, NameSegmentsFailed,
	NameStageFailed, NameUnexpected,
}

// Name returns the ASL error name of err: the name of the first step
// error type in its chain, NameTransient for a context deadline, and
// NameUnexpected for anything else. It returns "" only for nil.
func Name(err error) string {
	if err == nil {
		return ""
	}
	var (
		t  *TransientError
		iv *InvalidDocumentError
		u  *UnsupportedFormatError
		tl *TooLargeError
		pp *PasswordProtectedError
		ii *InvalidInputError
		sf *SegmentsFailedError
		st *StageFailedError
		ue *UnexpectedError
		rp *ReviewPendingError
	)
	switch {
	case errors.As(err, &t):
		return NameTransient
	case errors.As(err, &iv):
		return NameInvalidDocument
	case errors.As(err, &u):
		return NameUnsupportedFormat
	case errors.As(err, &tl):
		return NameTooLarge
	case errors.As(err, &pp):
		return NamePasswordProtected
	case errors.As(err, &ii):
		return NameInvalidInput
	case errors.As(err, &sf):
		return NameSegmentsFailed
	case errors.As(err, &st):
		return NameStageFailed
	case errors.As(err, &ue):
		return NameUnexpected
	case errors.As(err, &rp):
		return NameReviewPending
	case errors.Is(err, context.DeadlineExceeded):
		return NameTransient
	}
	return NameUnexpected
}

// Typed returns err as one of the named step error types, so that an
// engine reporting the error's type name (Lambda's errorType) reports the
// ASL name: a wrapped typed error is unwrapped, an unclassified one becomes
// an UnexpectedError carrying the whole message.
func Typed(err error) error {
	if err == nil {
		return nil
	}
	if e := asTyped[*TransientError](err); e != nil {
		return e
	}
	if e := asTyped[*InvalidDocumentError](err); e != nil {
		return e
	}
	if e := asTyped[*UnsupportedFormatError](err); e != nil {
		return e
	}
	if e := asTyped[*TooLargeError](err); e != nil {
		return e
	}
	if e := asTyped[*PasswordProtectedError](err); e != nil {
		return e
	}
	if e := asTyped[*InvalidInputError](err); e != nil {
		return e
	}
	if e := asTyped[*SegmentsFailedError](err); e != nil {
		return e
	}
	if e := asTyped[*StageFailedError](err); e != nil {
		return e
	}
	if e := asTyped[*UnexpectedError](err); e != nil {
		return e
	}
	if e := asTyped[*ReviewPendingError](err); e != nil {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &TransientError{Reason: err.Error()}
	}
	return &UnexpectedError{Reason: err.Error()}
}

func asTyped[T error](err error) error {
	var t T
	if errors.As(err, &t) {
		return t
	}
	return nil
}
