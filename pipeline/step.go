package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/docpipe/docpipe/pipeline/steperr"
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
	Step string `json:"step"`
	// Handler names the registered handler when it is not Step itself: a
	// builtin under another stage name, or a generic user-stage handler.
	Handler string `json:"handler,omitempty"`
	// Skip asks the handler to record the stage as skipped: its `when`
	// condition did not match the document.
	Skip     bool         `json:"skip,omitempty"`
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
	// Doc is what format_parser learned about the document; the state
	// machine keeps it for the stages' `when` conditions.
	Doc *DocAttrs `json:"doc,omitempty"`
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

// Invoke dispatches a payload on its "handler" field, or its "step" field
// when it has none: the Lambda entry point.
func (r *Registry) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var head struct {
		Step    string `json:"step"`
		Handler string `json:"handler"`
	}
	if err := json.Unmarshal(payload, &head); err != nil {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("payload is not JSON: %v", err)}
	}
	name := head.Step
	if head.Handler != "" {
		name = head.Handler
	}
	h, ok := r.Lookup(name)
	if !ok {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("unknown step %q", name)}
	}
	return h.Invoke(ctx, payload)
}
