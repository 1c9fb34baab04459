package interp

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docpipe/docpipe/statemachine/asl"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// exec runs one state on raw (the state's input) and returns its output and
// the next state's name ("" when the machine ends here).
func (n *node) exec(ctx context.Context, ex *execution, raw any) (any, string, *failure) {
	env := &evalEnv{ex: ex, state: n.name, entered: ex.eng.clock.Now()}
	switch n.kind {
	case asl.TypeTask, asl.TypeParallel, asl.TypeMap:
		return n.withRetry(ctx, env, raw)
	case asl.TypePass:
		out, f := n.pass(env, raw)
		return out, n.next, f
	case asl.TypeChoice:
		return n.choice(env, raw)
	case asl.TypeWait:
		out, f := n.wait(ctx, env, raw)
		return out, n.next, f
	case asl.TypeSucceed:
		in, f := n.input.apply(env, raw, "InputPath")
		if f != nil {
			return nil, "", f
		}
		out, f := n.output.apply(env, in, "OutputPath")
		return out, "", f
	case asl.TypeFail:
		return nil, "", n.fail(env, raw)
	}
	return nil, "", runtimeFailure("unsupported state type %s", n.kind)
}

func (n *node) pass(env *evalEnv, raw any) (any, *failure) {
	in, f := n.input.apply(env, raw, "InputPath")
	if f != nil {
		return nil, f
	}
	if n.params != nil {
		if in, f = n.params.eval(env, in); f != nil {
			return nil, f
		}
	}
	if n.hasResult {
		in = n.passResult
	}
	out, f := n.result.apply(raw, in)
	if f != nil {
		return nil, f
	}
	return n.output.apply(env, out, "OutputPath")
}

func (n *node) choice(env *evalEnv, raw any) (any, string, *failure) {
	in, f := n.input.apply(env, raw, "InputPath")
	if f != nil {
		return nil, "", f
	}
	next := ""
	for _, r := range n.rules {
		ok, f := r.eval(env, in)
		if f != nil {
			return nil, "", f
		}
		if ok {
			next = r.next
			break
		}
	}
	if next == "" {
		next = n.defaultNext
	}
	if next == "" {
		return nil, "", &failure{name: asl.ErrorNoChoiceMatched, cause: "No Matches!"}
	}
	out, f := n.output.apply(env, in, "OutputPath")
	return out, next, f
}

func (n *node) wait(ctx context.Context, env *evalEnv, raw any) (any, *failure) {
	in, f := n.input.apply(env, raw, "InputPath")
	if f != nil {
		return nil, f
	}
	clock := env.ex.eng.clock
	var d time.Duration
	switch n.waitKind {
	case waitSeconds:
		d = n.waitFor
	case waitTimestamp:
		d = n.waitTimestamp.Sub(clock.Now())
	case waitSecondsPath:
		v, ok := env.resolve(n.waitSecondsPath, in)
		s, isNum := v.(float64)
		if !ok || !isNum || s < 0 || s != math.Trunc(s) {
			return nil, runtimeFailure("Invalid path '%s': SecondsPath must select a non-negative integer", n.waitSecondsPath.Raw)
		}
		d = time.Duration(s) * time.Second
	case waitTimestampPath:
		v, ok := env.resolve(n.waitTimestampPath, in)
		s, isStr := v.(string)
		t, err := asl.ParseTimestamp(s)
		if !ok || !isStr || err != nil {
			return nil, runtimeFailure("Invalid path '%s': TimestampPath must select an RFC 3339 timestamp", n.waitTimestampPath.Raw)
		}
		d = t.Sub(clock.Now())
	}
	env.ex.emit(Event{Type: WaitStarted, State: n.name, StateType: n.kind})
	if d > 0 {
		if clock.Sleep(ctx, d) != nil {
			return nil, abortFailure(ctx)
		}
	}
	return n.output.apply(env, in, "OutputPath")
}

func (n *node) fail(env *evalEnv, raw any) *failure {
	f := &failure{name: n.errName, cause: n.cause}
	for _, d := range []struct {
		t   tmpl
		dst *string
	}{{n.errDynamic, &f.name}, {n.causeDyn, &f.cause}} {
		if d.t == nil {
			continue
		}
		v, ff := d.t.eval(env, raw)
		if ff != nil {
			return ff
		}
		s, ok := v.(string)
		if !ok {
			return runtimeFailure("ErrorPath and CausePath must select strings, got %s", typeName(v))
		}
		*d.dst = s
	}
	return f
}

// withRetry runs an attempt of a Task, Parallel or Map state under its
// Retry and Catch rules. Each retrier counts its own attempts; the first
// retrier that matches decides, and once it is exhausted the catchers do.
func (n *node) withRetry(ctx context.Context, env *evalEnv, raw any) (any, string, *failure) {
	var counts []int
	if len(n.retriers) > 0 {
		counts = make([]int, len(n.retriers))
	}
	ex := env.ex
	for {
		out, f := n.attempt(ctx, env, raw)
		if f == nil {
			return out, n.next, nil
		}
		if f.aborted || ctx.Err() != nil {
			return nil, "", abortFailure(ctx)
		}
		retried := false
		for i, r := range n.retriers {
			if !matches(r.errorEquals, f) {
				continue
			}
			if counts[i] < r.maxAttempts {
				d := r.delay(counts[i], ex.eng.float64)
				counts[i]++
				env.retry++
				ex.emit(Event{Type: TaskRetryScheduled, State: n.name, StateType: n.kind, Error: f.name, Cause: f.cause})
				if ex.eng.clock.Sleep(ctx, d) != nil {
					return nil, "", abortFailure(ctx)
				}
				env.ctxObj = nil // RetryCount changed
				retried = true
			}
			break
		}
		if retried {
			continue
		}
		for _, c := range n.catchers {
			if !matches(c.errorEquals, f) {
				continue
			}
			errOut := map[string]any{"Error": f.name, "Cause": f.cause}
			out, rf := c.result.apply(raw, errOut)
			if rf != nil {
				return nil, "", rf
			}
			ex.emit(Event{Type: ErrorCaught, State: n.name, StateType: n.kind, Error: f.name, Cause: f.cause})
			return out, c.next, nil
		}
		return nil, "", f
	}
}

// attempt is one try of a Task, Parallel or Map state: InputPath →
// Parameters/ItemSelector → work → ResultSelector → ResultPath → OutputPath.
func (n *node) attempt(ctx context.Context, env *evalEnv, raw any) (any, *failure) {
	in, f := n.input.apply(env, raw, "InputPath")
	if f != nil {
		return nil, f
	}
	var res any
	switch n.kind {
	case asl.TypeTask:
		env.token = env.ex.eng.tokenPrefix + strconv.FormatInt(env.ex.eng.tokenSeq.Add(1), 10)
		env.ctxObj = nil
		if n.params != nil {
			if in, f = n.params.eval(env, in); f != nil {
				return nil, f
			}
		}
		res, f = n.invoke(ctx, env, in)
	case asl.TypeParallel:
		if n.params != nil {
			if in, f = n.params.eval(env, in); f != nil {
				return nil, f
			}
		}
		res, f = n.parallel(ctx, env, in)
	case asl.TypeMap:
		res, f = n.runMap(ctx, env, in)
	}
	if f != nil {
		return nil, f
	}
	if n.selector != nil {
		if res, f = n.selector.eval(env, res); f != nil {
			return nil, f
		}
	}
	out, f := n.result.apply(raw, res)
	if f != nil {
		return nil, f
	}
	return n.output.apply(env, out, "OutputPath")
}

var (
	errTaskTimeout      = errors.New("task timed out")
	errHeartbeatTimeout = errors.New("task heartbeat timed out")
)

// secondsAt reads a positive integer number of seconds from a path.
func secondsAt(env *evalEnv, p *asl.Path, data any) (time.Duration, *failure) {
	v, ok := env.resolve(p, data)
	s, isNum := v.(float64)
	if !ok || !isNum || s <= 0 || s != math.Trunc(s) {
		return 0, runtimeFailure("Invalid path '%s': must select a positive integer number of seconds", p.Raw)
	}
	return time.Duration(s) * time.Second, nil
}

func (n *node) invoke(ctx context.Context, env *evalEnv, in any) (any, *failure) {
	ex := env.ex
	timeout, heartbeat := n.timeout, n.heartbeat
	var f *failure
	if n.timeoutPath != nil {
		if timeout, f = secondsAt(env, n.timeoutPath, in); f != nil {
			return nil, f
		}
	}
	if n.heartbeatPath != nil {
		if heartbeat, f = secondsAt(env, n.heartbeatPath, in); f != nil {
			return nil, f
		}
	}
	b, err := marshal(in)
	if err != nil {
		return nil, runtimeFailure("task input is not JSON: %v", err)
	}
	if len(b) > MaxPayloadBytes {
		return nil, &failure{name: asl.ErrorDataLimitExceeded, cause: "task input exceeds the maximum of " + strconv.Itoa(MaxPayloadBytes) + " bytes"}
	}
	tasks := ex.eng.opts.Tasks
	if tasks == nil {
		return nil, &failure{name: asl.ErrorTaskFailed, cause: "no task invoker configured"}
	}
	tc := TaskContext{
		Token:            env.token,
		ExecutionID:      ex.id,
		StateName:        n.name,
		RetryCount:       env.retry,
		Timeout:          timeout,
		HeartbeatTimeout: heartbeat,
		Heartbeat:        func() {},
	}
	ex.emit(Event{Type: TaskScheduled, State: n.name, StateType: n.kind, Resource: n.resource})
	var out json.RawMessage
	if timeout == 0 && heartbeat == 0 {
		out, err = tasks.Invoke(ctx, n.resource, b, tc)
	} else {
		out, err = invokeWithTimers(ctx, ex.eng.clock, tasks, n.resource, b, tc)
	}
	if err != nil {
		f := n.taskFailure(ctx, err)
		typ := TaskFailed
		if errors.Is(err, errTaskTimeout) || errors.Is(err, errHeartbeatTimeout) {
			typ = TaskTimedOut
		}
		if !f.aborted {
			ex.emit(Event{Type: typ, State: n.name, StateType: n.kind, Resource: n.resource, Error: f.name, Cause: f.cause})
		}
		return nil, f
	}
	if len(out) > MaxPayloadBytes {
		return nil, &failure{name: asl.ErrorDataLimitExceeded, cause: "task output exceeds the maximum of " + strconv.Itoa(MaxPayloadBytes) + " bytes"}
	}
	var res any
	if len(out) > 0 {
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, runtimeFailure("task output is not JSON: %v", err)
		}
	}
	ex.emit(Event{Type: TaskSucceeded, State: n.name, StateType: n.kind, Resource: n.resource})
	return res, nil
}

// taskFailure names an invoker's error for Retry and Catch.
func (n *node) taskFailure(ctx context.Context, err error) *failure {
	switch {
	case errors.Is(err, errTaskTimeout):
		return &failure{name: asl.ErrorTimeout, cause: "Task timed out"}
	case errors.Is(err, errHeartbeatTimeout):
		return &failure{name: asl.ErrorHeartbeatTimeout, cause: "Task heartbeat timed out"}
	case ctx.Err() != nil:
		return abortFailure(ctx)
	}
	var te *TaskError
	if errors.As(err, &te) {
		name := te.Name
		if name == "" {
			name = asl.ErrorTaskFailed
		}
		return &failure{name: name, cause: te.Cause}
	}
	var named interface{ ErrorName() string }
	if errors.As(err, &named) && named.ErrorName() != "" {
		return &failure{name: named.ErrorName(), cause: err.Error()}
	}
	return &failure{name: asl.ErrorTaskFailed, cause: err.Error()}
}

// windDown is how long a task whose state has ended (its timeout, a
// sibling branch's failure, an abort) is given to return, on the real
// clock.
const windDown = 5 * time.Second

// invokeWithTimers runs the invoker on its own goroutine so a timeout ends
// the state even when the invoker ignores its context (windDown after the
// deadline); the timers run on the engine's clock. It returns
// errTaskTimeout or errHeartbeatTimeout when one fires first.
func invokeWithTimers(ctx context.Context, clock Clock, tasks TaskInvoker, resource string, in json.RawMessage, tc TaskContext) (json.RawMessage, error) {
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var last atomic.Int64
	last.Store(clock.Now().UnixNano())
	tc.Heartbeat = func() { last.Store(clock.Now().UnixNano()) }

	type result struct {
		out json.RawMessage
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := tasks.Invoke(tctx, resource, in, tc)
		done <- result{out, err}
	}()
	var wg sync.WaitGroup
	if af, ok := clock.(afterFuncClock); ok && tc.Timeout > 0 {
		// The real clock arms a runtime timer: no goroutine parked per task.
		stop := af.AfterFunc(tc.Timeout, func() { cancel(errTaskTimeout) })
		defer stop()
	} else if tc.Timeout > 0 {
		wg.Go(func() {
			if clock.Sleep(tctx, tc.Timeout) == nil {
				cancel(errTaskTimeout)
			}
		})
	}
	if tc.HeartbeatTimeout > 0 {
		wg.Go(func() {
			for {
				due := time.Unix(0, last.Load()).Add(tc.HeartbeatTimeout)
				d := due.Sub(clock.Now())
				if d <= 0 {
					cancel(errHeartbeatTimeout)
					return
				}
				if clock.Sleep(tctx, d) != nil {
					return
				}
			}
		})
	}
	var r result
	ended := false // before the invoker answered
	select {
	case r = <-done:
	case <-tctx.Done():
		ended = true
		// The invoker's context is cancelled; one that honours it returns
		// at once, and what it records as it stops then lands before the
		// states after this one (a retry, a Catch, the failure handler)
		// look. One that ignores it is left behind after windDown.
		wind := time.NewTimer(windDown)
		select {
		case <-done:
		case <-wind.C:
		}
		wind.Stop()
	}
	cause := context.Cause(tctx)
	cancel(nil)
	wg.Wait()
	if errors.Is(cause, errTaskTimeout) || errors.Is(cause, errHeartbeatTimeout) || ended && cause != nil {
		return nil, cause
	}
	if r.out == nil && r.err == nil && cause != nil {
		return nil, cause
	}
	return r.out, r.err
}
