package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Handler is a step handler: JSON in, JSON out, exactly as a Lambda function
// is invoked. The local engine calls handlers through this same path, so a
// local run exercises what production runs.
type Handler interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, payload []byte) ([]byte, error)

func (f HandlerFunc) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return f(ctx, payload)
}

// WorkflowRef identifies a workflow in every payload. Only ids travel
// through the state machine, never document data.
type WorkflowRef struct {
	ProjectID  string `json:"project_id"`
	DocumentID string `json:"document_id"`
	WorkflowID string `json:"workflow_id"`
}

// Batch is one entry of the segment manifest: segments From..To inclusive.
type Batch struct {
	Batch int `json:"batch"`
	From  int `json:"from"`
	To    int `json:"to"`
}

// ExecutionInput is the state machine's input for one workflow.
type ExecutionInput struct {
	Workflow WorkflowRef `json:"workflow"`
	// Bucket and ManifestKey locate the segment manifest for the
	// Distributed Map's ItemReader. Locally Bucket names the blob store.
	Bucket      string `json:"bucket"`
	ManifestKey string `json:"manifest_key"`
}

// CaughtError is what a Catch puts at its ResultPath.
type CaughtError struct {
	Error string `json:"Error"`
	Cause string `json:"Cause"`
}

// StepInput is the payload of every task.
type StepInput struct {
	Step     string       `json:"step"`
	Workflow WorkflowRef  `json:"workflow"`
	Batch    *Batch       `json:"batch,omitempty"` // segment_batch stages
	Error    *CaughtError `json:"error,omitempty"` // workflow_failed
}

// StepOutput is what every task returns. The state machine discards it
// (ResultPath null); it is for logs and tests.
type StepOutput struct {
	Step    string `json:"step"`
	Skipped bool   `json:"skipped,omitempty"` // already done by an earlier attempt
	Message string `json:"message,omitempty"`
}

// Registry maps step names to handlers.
type Registry struct {
	mu       sync.RWMutex
	handlers map[string]Handler
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{handlers: map[string]Handler{}} }

// Register adds a handler; registering a name twice panics (a wiring bug).
func (r *Registry) Register(name string, h Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.handlers[name]; dup {
		panic("pipeline: step registered twice: " + name)
	}
	r.handlers[name] = h
}

// Lookup returns the handler for a step name.
func (r *Registry) Lookup(name string) (Handler, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h, ok := r.handlers[name]
	return h, ok
}

// Invoke dispatches a payload on its "step" field: the Lambda entry point.
func (r *Registry) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var head struct {
		Step string `json:"step"`
	}
	if err := json.Unmarshal(payload, &head); err != nil {
		return nil, &InvalidInputError{Reason: fmt.Sprintf("payload is not JSON: %v", err)}
	}
	h, ok := r.Lookup(head.Step)
	if !ok {
		return nil, &InvalidInputError{Reason: fmt.Sprintf("unknown step %q", head.Step)}
	}
	return h.Invoke(ctx, payload)
}

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
func (e *UnexpectedError) Error() string        { return e.Reason }

// ASL error names, pinned by a test against the type names.
const (
	ErrNameTransient         = "TransientError"
	ErrNameInvalidDocument   = "InvalidDocumentError"
	ErrNameUnsupportedFormat = "UnsupportedFormatError"
	ErrNameTooLarge          = "TooLargeError"
	ErrNamePasswordProtected = "PasswordProtectedError"
	ErrNameInvalidInput      = "InvalidInputError"
	ErrNameSegmentsFailed    = "SegmentsFailedError"
	ErrNameUnexpected        = "UnexpectedError"
)

// PermanentErrorNames are the errors no retry can fix.
var PermanentErrorNames = []string{
	ErrNameInvalidDocument, ErrNameUnsupportedFormat, ErrNameTooLarge,
	ErrNamePasswordProtected, ErrNameInvalidInput, ErrNameSegmentsFailed,
	ErrNameUnexpected,
}

// ErrorName returns the ASL error name of err: the name of the first step
// error type in its chain, ErrNameTransient for a context deadline, and
// ErrNameUnexpected for anything else. It returns "" only for nil.
func ErrorName(err error) string {
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
		ue *UnexpectedError
	)
	switch {
	case errors.As(err, &t):
		return ErrNameTransient
	case errors.As(err, &iv):
		return ErrNameInvalidDocument
	case errors.As(err, &u):
		return ErrNameUnsupportedFormat
	case errors.As(err, &tl):
		return ErrNameTooLarge
	case errors.As(err, &pp):
		return ErrNamePasswordProtected
	case errors.As(err, &ii):
		return ErrNameInvalidInput
	case errors.As(err, &sf):
		return ErrNameSegmentsFailed
	case errors.As(err, &ue):
		return ErrNameUnexpected
	case errors.Is(err, context.DeadlineExceeded):
		return ErrNameTransient
	}
	return ErrNameUnexpected
}

// AsStepError returns err as one of the named step error types, so that an
// engine reporting the error's type name (Lambda's errorType) reports the
// ASL name: a wrapped typed error is unwrapped, an unclassified one becomes
// an UnexpectedError carrying the whole message.
func AsStepError(err error) error {
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
	if e := asTyped[*UnexpectedError](err); e != nil {
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
