// Package embedded runs the generated local-mode state machine in-process:
// the interpreter drives it and every task calls a step handler through the
// same JSON-in/JSON-out path a Lambda invocation takes.
package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/statemachine"
	"github.com/docpipe/docpipe/statemachine/asl"
	"github.com/docpipe/docpipe/statemachine/interp"
)

// maxManifestBytes bounds the manifest the Distributed Map reads (30,000
// pages in batches of 1 is ~1.2 MB).
const maxManifestBytes = 64 << 20

// Engine executes workflows on the in-process interpreter.
type Engine struct {
	sm     *asl.StateMachine
	interp *interp.Engine
}

// Options tune the engine.
type Options struct {
	// OnEvent receives the interpreter's history events (may be nil).
	OnEvent func(interp.Event)
}

// New builds an engine over the committed local-mode definition.
func New(reg *pipeline.Registry, blobs blob.Store, opts Options) (*Engine, error) {
	def, err := statemachine.Definition(statemachine.ModeLocal)
	if err != nil {
		return nil, err
	}
	sm, err := asl.Parse(def)
	if err == nil {
		err = asl.Validate(sm)
	}
	if err != nil {
		return nil, fmt.Errorf("embedded: local definition: %w", err)
	}
	e := &Engine{sm: sm}
	e.interp = interp.New(interp.Options{
		Tasks:      taskInvoker{reg: reg},
		ItemReader: itemReader{blobs: blobs},
		OnEvent:    opts.OnEvent,
	})
	return e, nil
}

// Run executes the workflow's state machine to its end. The execution is
// named after the workflow. A failure the state machine caught (and
// recorded in the table) comes back as an *interp.ExecutionError.
func (e *Engine) Run(ctx context.Context, input pipeline.ExecutionInput) error {
	raw, err := json.Marshal(input)
	if err != nil {
		return err
	}
	_, err = e.interp.Execute(ctx, e.sm, input.Workflow.WorkflowID, raw)
	return err
}

// taskInvoker routes "docpipe:local:<step>" resources to the registry.
type taskInvoker struct {
	reg *pipeline.Registry
}

func (t taskInvoker) Invoke(ctx context.Context, resource string, input json.RawMessage, _ interp.TaskContext) (json.RawMessage, error) {
	step, ok := strings.CutPrefix(resource, statemachine.LocalResource(""))
	if !ok {
		return nil, &interp.TaskError{Name: "States.Runtime", Cause: "the embedded engine cannot run resource " + resource}
	}
	h, ok := t.reg.Lookup(step)
	if !ok {
		return nil, &interp.TaskError{Name: steperr.NameInvalidInput, Cause: "no handler for step " + step}
	}
	out, err := h.Invoke(ctx, input)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, err // cancelled: the execution is aborted, not failed
		}
		return nil, &interp.TaskError{Name: steperr.Name(err), Cause: err.Error()}
	}
	return out, nil
}

// itemReader serves the Distributed Map's ItemReader from the blob store;
// the bucket name is not needed locally.
type itemReader struct {
	blobs blob.Store
}

func (r itemReader) ReadItems(ctx context.Context, _ string, key string) ([]byte, error) {
	return blob.GetBytes(ctx, r.blobs, key, maxManifestBytes)
}
