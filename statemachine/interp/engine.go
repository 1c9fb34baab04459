// Package interp is an in-process interpreter for Amazon States Language
// definitions (see package asl). It compiles a validated definition into a
// tree of states once, then evaluates executions over decoded JSON values,
// calling tasks through a TaskInvoker with the same JSON-in/JSON-out contract
// the cloud uses.
//
// Values flowing between states are decoded JSON (map[string]any, []any,
// string, float64, bool, nil) and are never mutated once built: ResultPath
// copies the objects along its path instead of writing into its input, so
// constants and Map items can be shared between concurrent iterations.
package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docpipe/docpipe/statemachine/asl"
)

// TaskInvoker runs a Task state's resource.
type TaskInvoker interface {
	// Invoke runs resource with input. ctx ends when the execution is
	// aborted or the state's timeout passes. A returned error is matched by
	// Retry and Catch under the name given by *TaskError, an
	// ErrorName() string method, or else "States.TaskFailed".
	Invoke(ctx context.Context, resource string, input json.RawMessage, tc TaskContext) (json.RawMessage, error)
}

// TaskInvokerFunc adapts a function to TaskInvoker.
type TaskInvokerFunc func(ctx context.Context, resource string, input json.RawMessage, tc TaskContext) (json.RawMessage, error)

// Invoke calls f.
func (f TaskInvokerFunc) Invoke(ctx context.Context, resource string, input json.RawMessage, tc TaskContext) (json.RawMessage, error) {
	return f(ctx, resource, input, tc)
}

// TaskContext describes one task attempt to the invoker.
type TaskContext struct {
	Token       string // the task token ($$.Task.Token)
	ExecutionID string
	StateName   string
	RetryCount  int
	// Timeout and HeartbeatTimeout are zero when the state sets none.
	Timeout          time.Duration
	HeartbeatTimeout time.Duration
	// Heartbeat records that the task is alive; it is always safe to call.
	Heartbeat func()
}

// TaskError is a named task failure, matched by Retry and Catch on Name.
type TaskError struct {
	Name  string
	Cause string
}

func (e *TaskError) Error() string {
	if e.Cause == "" {
		return e.Name
	}
	return e.Name + ": " + e.Cause
}

// ItemReader fetches the object a distributed Map's ItemReader names.
type ItemReader interface {
	ReadItems(ctx context.Context, bucket, key string) ([]byte, error)
}

// ItemReaderFunc adapts a function to ItemReader.
type ItemReaderFunc func(ctx context.Context, bucket, key string) ([]byte, error)

// ReadItems calls f.
func (f ItemReaderFunc) ReadItems(ctx context.Context, bucket, key string) ([]byte, error) {
	return f(ctx, bucket, key)
}

// Clock is the engine's source of time; Wait states, retry backoff, timeouts
// and heartbeats all go through it.
type Clock interface {
	Now() time.Time
	// Sleep waits for d, returning early with ctx's error if ctx ends.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits for d or until ctx ends.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AfterFunc runs f after d on a runtime timer; the returned function
// stops it.
func (SystemClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	return time.AfterFunc(d, f).Stop
}

// afterFuncClock is a Clock that can schedule a callback without a waiting
// goroutine. Fake clocks need not implement it: the engine then sleeps in a
// goroutine through Sleep, which they control.
type afterFuncClock interface {
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// DefaultMaxConcurrency caps a Map whose MaxConcurrency is 0 (unbounded in
// the specification): in-process iterations share the machine's cores, so
// more goroutines than this only add scheduling overhead.
const DefaultMaxConcurrency = 64

// MaxPayloadBytes is the Step Functions payload limit, enforced on task
// input and output as States.DataLimitExceeded.
const MaxPayloadBytes = 256 * 1024

// Options configures an Engine.
type Options struct {
	Tasks      TaskInvoker
	ItemReader ItemReader
	Clock      Clock       // default SystemClock
	OnEvent    func(Event) // history callback; calls are serialised
	// Rand drives retry jitter, States.MathRandom and States.UUID. It is
	// guarded by the engine, so a seeded *rand.Rand makes runs repeatable.
	Rand *rand.Rand
	// StateMachineID is $$.StateMachine.Id and the prefix of execution ids.
	// Default "arn:aws:states:local:000000000000:stateMachine:local".
	StateMachineID string
	// MaxConcurrency replaces DefaultMaxConcurrency when positive.
	MaxConcurrency int
}

// Engine runs executions. It is safe for concurrent use.
type Engine struct {
	opts     Options
	clock    Clock
	randMu   sync.Mutex
	rand     *rand.Rand
	programs sync.Map // *asl.StateMachine → *program
	maxConc  int
	smName   string
	// ctxStateMachine is $$.StateMachine, shared by every execution.
	ctxStateMachine map[string]any
	tokenPrefix     string
	tokenSeq        atomic.Int64
}

// New returns an Engine.
func New(opts Options) *Engine {
	e := &Engine{opts: opts, clock: opts.Clock, rand: opts.Rand, maxConc: opts.MaxConcurrency}
	if e.clock == nil {
		e.clock = SystemClock{}
	}
	if e.rand == nil {
		e.rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if e.maxConc <= 0 {
		e.maxConc = DefaultMaxConcurrency
	}
	if e.opts.StateMachineID == "" {
		e.opts.StateMachineID = "arn:aws:states:local:000000000000:stateMachine:local"
	}
	e.smName = lastField(e.opts.StateMachineID)
	e.ctxStateMachine = map[string]any{"Id": e.opts.StateMachineID, "Name": e.smName}
	// The token prefix comes from the global source so a seeded Rand yields
	// the same jitter and UUIDs whatever else the engine draws.
	e.tokenPrefix = strconv.FormatUint(rand.Uint64()>>16, 36) + "-"
	return e
}

func lastField(arn string) string {
	for i := len(arn) - 1; i >= 0; i-- {
		if arn[i] == ':' {
			return arn[i+1:]
		}
	}
	return arn
}

func (e *Engine) float64() float64 {
	e.randMu.Lock()
	defer e.randMu.Unlock()
	return e.rand.Float64()
}

func (e *Engine) uint64() uint64 {
	e.randMu.Lock()
	defer e.randMu.Unlock()
	return e.rand.Uint64()
}

// ExecutionError is a failed, timed out or aborted execution.
type ExecutionError struct {
	Name  string `json:"Error"` // the ASL error name, e.g. "States.Timeout"
	Cause string `json:"Cause"`
	err   error
}

// Error names: aborted executions report these (they are not ASL errors a
// state machine can catch).
const (
	ErrorAborted = "States.Aborted"
)

func (e *ExecutionError) Error() string {
	if e.Cause == "" {
		return e.Name
	}
	return e.Name + ": " + e.Cause
}

// Unwrap returns the context error of an aborted execution.
func (e *ExecutionError) Unwrap() error { return e.err }

// Compile validates and compiles a definition ahead of Execute, returning a
// *asl.ValidationError when it is invalid. Execute compiles on first use.
func (e *Engine) Compile(sm *asl.StateMachine) error {
	_, err := e.program(sm)
	return err
}

func (e *Engine) program(sm *asl.StateMachine) (*program, error) {
	if p, ok := e.programs.Load(sm); ok {
		return p.(*program), nil
	}
	if err := asl.Validate(sm); err != nil {
		return nil, err
	}
	p, err := compileProgram(sm)
	if err != nil {
		return nil, err
	}
	actual, _ := e.programs.LoadOrStore(sm, p)
	return actual.(*program), nil
}

// Execute runs sm to completion. The definition is compiled once per
// *asl.StateMachine and cached: do not modify it after the first Execute.
// A failed execution returns *ExecutionError; an invalid definition returns
// *asl.ValidationError; a cancelled ctx aborts with ExecutionError
// "States.Aborted" wrapping ctx's error.
func (e *Engine) Execute(ctx context.Context, sm *asl.StateMachine, name string, input json.RawMessage) (json.RawMessage, error) {
	prog, err := e.program(sm)
	if err != nil {
		return nil, err
	}
	var in any
	if len(input) == 0 {
		in = map[string]any{}
	} else if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("interp: execution input is not JSON: %w", err)
	}
	ex := &execution{
		eng:   e,
		id:    e.executionARN(name),
		name:  name,
		input: in,
		start: e.clock.Now(),
		hist:  &history{fn: e.opts.OnEvent, clock: e.clock},
		index: -1,
	}
	ex.emit(Event{Type: ExecutionStarted})

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timerDone chan struct{}
	if prog.timeout > 0 {
		timerDone = make(chan struct{})
		go func() {
			defer close(timerDone)
			if e.clock.Sleep(runCtx, prog.timeout) == nil {
				cancel(errExecutionTimeout)
			}
		}()
	}
	out, f := prog.root.run(runCtx, ex, in)
	cancel(nil)
	if timerDone != nil {
		<-timerDone
	}
	if f == nil && ctx.Err() == nil {
		b, err := json.Marshal(out)
		if err != nil {
			f = &failure{name: asl.ErrorRuntime, cause: "execution output is not JSON: " + err.Error()}
		} else {
			ex.emit(Event{Type: ExecutionSucceeded})
			return b, nil
		}
	}
	switch {
	case ctx.Err() != nil:
		ex.emit(Event{Type: ExecutionAborted})
		return nil, &ExecutionError{Name: ErrorAborted, Cause: context.Cause(ctx).Error(), err: ctx.Err()}
	case errors.Is(context.Cause(runCtx), errExecutionTimeout) && (f == nil || f.aborted):
		ex.emit(Event{Type: ExecutionTimedOut, Error: asl.ErrorTimeout})
		return nil, &ExecutionError{Name: asl.ErrorTimeout, Cause: "execution timed out after " + prog.timeout.String()}
	}
	ex.emit(Event{Type: ExecutionFailed, Error: f.name, Cause: f.cause})
	return nil, &ExecutionError{Name: f.name, Cause: f.cause}
}

var errExecutionTimeout = errors.New("execution timed out")

func (e *Engine) executionARN(name string) string {
	return "arn:aws:states:local:000000000000:execution:" + e.smName + ":" + name
}

// execution is the per-run state shared by every state of one execution;
// child executions of a distributed Map get their own, sharing seq.
type execution struct {
	eng   *Engine
	id    string
	name  string
	input any
	start time.Time
	hist  *history // shared with child executions
	index int      // distributed Map item index of a child execution, else -1

	ctxOnce sync.Once
	ctxExec map[string]any
}
