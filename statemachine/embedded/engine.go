// Package embedded runs the generated local-mode state machine in-process:
// the interpreter drives it and every task calls a step handler through the
// same JSON-in/JSON-out path a Lambda invocation takes. Each pipeline
// version gets its own machine, compiled once.
package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/statemachine"
	"github.com/docpipe/docpipe/statemachine/asl"
	"github.com/docpipe/docpipe/statemachine/interp"
)

// maxManifestBytes bounds the manifest the Distributed Map reads (30,000
// pages in batches of 1 is ~1.2 MB).
const maxManifestBytes = 64 << 20

// Engine executes workflows on the in-process interpreter, each on the
// state machine generated from its pipeline version.
type Engine struct {
	interp   *interp.Engine
	recorder pipeline.StepRecorder

	mu       sync.Mutex
	machines map[string]*machine // by name@version
}

// machine is a pipeline version's compiled local-mode state machine.
type machine struct {
	hash string // the definition's content hash
	sm   *asl.StateMachine
}

// Options tune the engine.
type Options struct {
	// OnEvent receives the interpreter's history events (may be nil).
	OnEvent func(interp.Event)
	// Recorder is the step recorder the handlers in reg were given
	// (steps.Deps.Recorder), a pipeline.BatchRecorder: the steps run one
	// after the other here, and each records the completion of the one
	// before with its own start. Run flushes what the last one left. Nil:
	// the handlers record every change on its own.
	Recorder pipeline.StepRecorder
}

// New builds an engine whose tasks call the handlers in reg. It compiles
// the default pipeline once up front, so a broken build fails here.
func New(reg *pipeline.Registry, blobs blob.Store, opts Options) (*Engine, error) {
	e := &Engine{machines: map[string]*machine{}, recorder: opts.Recorder}
	if _, err := compile(pipelinefile.Default(), pipeline.DefaultPipeline); err != nil {
		return nil, err
	}
	e.interp = interp.New(interp.Options{
		Tasks:      taskInvoker{reg: reg},
		ItemReader: itemReader{blobs: blobs},
		OnEvent:    opts.OnEvent,
	})
	return e, nil
}

// Run executes the workflow's state machine, generated from def (the
// pipeline version the workflow records), to its end. The execution is
// named after the workflow. A failure the state machine caught (and
// recorded in the table) comes back as an *interp.ExecutionError.
func (e *Engine) Run(ctx context.Context, def pipeline.Definition, version int, input pipeline.ExecutionInput) error {
	err := e.execute(ctx, def, version, input)
	// What the last step left is recorded also when the run was
	// cancelled: the step did finish.
	if e.recorder != nil {
		if ferr := e.recorder.Flush(context.WithoutCancel(ctx), input.Workflow); ferr != nil && err == nil {
			err = ferr
		}
	}
	var ee *interp.ExecutionError
	if errors.As(err, &ee) && ee.Name == steperr.NameReviewPending {
		return fmt.Errorf("%w: %s", ErrWaitingReview, ee.Cause)
	}
	return err
}

func (e *Engine) execute(ctx context.Context, def pipeline.Definition, version int, input pipeline.ExecutionInput) error {
	sm, err := e.machine(def, version)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return err
	}
	_, err = e.interp.Execute(ctx, sm, input.Workflow.WorkflowID, raw)
	return err
}

// ErrWaitingReview is how Run ends a workflow that a review stage parked:
// nothing runs until the review is decided; running the workflow again
// then goes on from there (the stages done are skipped).
var ErrWaitingReview = errors.New("embedded: waiting for review")

// machine returns the compiled state machine of a pipeline version,
// generating, parsing and validating it the first time. Versions are
// immutable: a different definition under a version already compiled is
// refused rather than run on the wrong machine.
func (e *Engine) machine(def pipeline.Definition, version int) (*asl.StateMachine, error) {
	key := pipeline.PipelineKey(def.Name, version)
	hash := def.ContentHash()
	e.mu.Lock()
	defer e.mu.Unlock()
	if m, ok := e.machines[key]; ok {
		if m.hash != hash {
			return nil, fmt.Errorf("embedded: pipeline %s was given with two different definitions; versions are immutable", key)
		}
		return m.sm, nil
	}
	sm, err := compile(def, key)
	if err != nil {
		return nil, err
	}
	e.machines[key] = &machine{hash: hash, sm: sm}
	return sm, nil
}

// compile generates def's local-mode ASL, parses and validates it.
func compile(def pipeline.Definition, key string) (*asl.StateMachine, error) {
	b, err := statemachine.Generate(def, statemachine.ModeLocal)
	if err != nil {
		return nil, fmt.Errorf("embedded: pipeline %s: %w", key, err)
	}
	sm, err := asl.Parse(b)
	if err == nil {
		err = asl.Validate(sm)
	}
	if err != nil {
		return nil, fmt.Errorf("embedded: pipeline %s: %w", key, err)
	}
	return sm, nil
}

// taskInvoker routes "docpipe:local:<stage>" resources to the registry,
// which dispatches on the payload's handler (a builtin under another
// name, or a user's stage) or else its step.
type taskInvoker struct {
	reg *pipeline.Registry
}

func (t taskInvoker) Invoke(ctx context.Context, resource string, input json.RawMessage, _ interp.TaskContext) (json.RawMessage, error) {
	name, ok := strings.CutPrefix(resource, statemachine.LocalResource(""))
	if !ok {
		return nil, &interp.TaskError{Name: "States.Runtime", Cause: "the embedded engine cannot run resource " + resource}
	}
	// The resource names the handler (see statemachine.LocalResource), so
	// dispatch needs no decoding of the payload.
	h, ok := t.reg.Lookup(name)
	if !ok {
		return nil, &interp.TaskError{Name: steperr.NameInvalidInput, Cause: fmt.Sprintf("no handler %q is registered", name)}
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
