package interp

import (
	"context"
	"fmt"
	"time"

	"github.com/docpipe/docpipe/statemachine/asl"
)

// program is a compiled state machine.
type program struct {
	root    *machine
	timeout time.Duration
}

// machine is a compiled (sub-)state machine.
type machine struct {
	start  string
	states map[string]*node
}

// node is one compiled state. Fields beyond the common ones are used only
// by the kinds noted.
type node struct {
	name, kind string
	next       string
	end        bool
	input      optPath
	output     optPath
	result     resultPath
	params     tmpl // Parameters (Task, Pass, Parallel)
	selector   tmpl // ResultSelector (Task, Parallel, Map)
	retriers   []*retrier
	catchers   []*catcher

	// Task
	resource      string
	timeout       time.Duration
	heartbeat     time.Duration
	timeoutPath   *asl.Path
	heartbeatPath *asl.Path

	// Pass
	passResult any
	hasResult  bool

	// Choice
	rules       []*rule
	defaultNext string

	// Wait
	waitFor           time.Duration
	waitTimestamp     time.Time
	waitSecondsPath   *asl.Path
	waitTimestampPath *asl.Path
	waitKind          int

	// Fail
	errName, cause       string
	errDynamic, causeDyn tmpl

	// Parallel
	branches []*machine

	// Map
	mp *mapSpec
}

const (
	waitSeconds = iota
	waitTimestamp
	waitSecondsPath
	waitTimestampPath
)

func compileProgram(sm *asl.StateMachine) (*program, error) {
	root, err := compileMachine(&asl.Machine{StartAt: sm.StartAt, States: sm.States})
	if err != nil {
		return nil, err
	}
	p := &program{root: root}
	if sm.TimeoutSeconds != nil {
		p.timeout = time.Duration(*sm.TimeoutSeconds) * time.Second
	}
	return p, nil
}

func compileMachine(m *asl.Machine) (*machine, error) {
	out := &machine{start: m.StartAt, states: make(map[string]*node, m.States.Len())}
	for _, name := range m.States.Names {
		n, err := compileNode(name, m.States.ByName[name])
		if err != nil {
			return nil, fmt.Errorf("interp: state %q: %w", name, err)
		}
		out.states[name] = n
	}
	return out, nil
}

func (n *node) io(io asl.IO) {
	n.input = compileOptPath(io.InputPath)
	n.output = compileOptPath(io.OutputPath)
}

func (n *node) handlers(retry []asl.Retrier, catch []asl.Catcher) {
	for i := range retry {
		n.retriers = append(n.retriers, newRetrier(&retry[i]))
	}
	for _, k := range catch {
		n.catchers = append(n.catchers, &catcher{errorEquals: k.ErrorEquals, next: k.Next, result: compileResultPath(k.ResultPath)})
	}
}

// compileNode compiles one state of a validated definition: paths,
// templates and timestamps were parsed with it, so only nested machines
// and Pass results can fail here.
func compileNode(name string, st asl.State) (*node, error) {
	n := &node{name: name, kind: st.StateType()}
	n.next, n.end = asl.Transition(st)
	var err error
	switch s := st.(type) {
	case *asl.Task:
		n.io(s.IO)
		n.resource = s.Resource
		n.params = compileTemplate(s.Parameters)
		n.selector = compileTemplate(s.ResultSelector)
		n.result = compileResultPath(s.ResultPath)
		n.handlers(s.Retry, s.Catch)
		if s.TimeoutSeconds != nil {
			n.timeout = time.Duration(*s.TimeoutSeconds) * time.Second
		}
		if s.HeartbeatSeconds != nil {
			n.heartbeat = time.Duration(*s.HeartbeatSeconds) * time.Second
		}
		n.timeoutPath = refPath(s.TimeoutSecondsPath)
		n.heartbeatPath = refPath(s.HeartbeatSecondsPath)
	case *asl.Pass:
		n.io(s.IO)
		n.params = compileTemplate(s.Parameters)
		n.result = compileResultPath(s.ResultPath)
		if s.Result != nil {
			// Result is literal data: ".$" keys in it are not evaluated.
			n.passResult, err = literal(s.Result)
			n.hasResult = true
		}
	case *asl.Choice:
		n.io(s.IO)
		n.defaultNext = s.Default
		for _, r := range s.Choices {
			n.rules = append(n.rules, compileRule(r))
		}
	case *asl.Wait:
		n.io(s.IO)
		switch {
		case s.Seconds != nil:
			n.waitKind, n.waitFor = waitSeconds, time.Duration(*s.Seconds)*time.Second
		case s.Timestamp != nil:
			n.waitKind, n.waitTimestamp = waitTimestamp, s.Timestamp.Time
		case s.SecondsPath != nil:
			n.waitKind, n.waitSecondsPath = waitSecondsPath, refPath(s.SecondsPath)
		default:
			n.waitKind, n.waitTimestampPath = waitTimestampPath, refPath(s.TimestampPath)
		}
	case *asl.Succeed:
		n.io(s.IO)
	case *asl.Fail:
		n.errName, n.cause = s.Error, s.Cause
		if s.ErrorPath != nil {
			n.errDynamic = compileExpr(s.ErrorPath.Raw, s.ErrorPath)
		}
		if s.CausePath != nil {
			n.causeDyn = compileExpr(s.CausePath.Raw, s.CausePath)
		}
	case *asl.Parallel:
		n.io(s.IO)
		n.params = compileTemplate(s.Parameters)
		n.selector = compileTemplate(s.ResultSelector)
		n.result = compileResultPath(s.ResultPath)
		n.handlers(s.Retry, s.Catch)
		for _, b := range s.Branches {
			m, berr := compileMachine(b)
			if berr != nil {
				return nil, berr
			}
			n.branches = append(n.branches, m)
		}
	case *asl.Map:
		n.io(s.IO)
		n.selector = compileTemplate(s.ResultSelector)
		n.result = compileResultPath(s.ResultPath)
		n.handlers(s.Retry, s.Catch)
		n.mp, err = compileMapSpec(name, s)
	default:
		return nil, fmt.Errorf("unsupported state type %T", st)
	}
	return n, err
}

func literal(raw []byte) (any, error) {
	var v any
	err := jsonUnmarshal(raw, &v)
	return v, err
}

// run executes the machine from StartAt until a terminal state.
func (m *machine) run(ctx context.Context, ex *execution, input any) (any, *failure) {
	name, data := m.start, input
	for {
		if ctx.Err() != nil {
			return nil, abortFailure(ctx)
		}
		n := m.states[name]
		ex.emit(Event{Type: StateEntered, State: name, StateType: n.kind})
		out, next, f := n.exec(ctx, ex, data)
		if f != nil {
			return nil, f
		}
		ex.emit(Event{Type: StateExited, State: name, StateType: n.kind})
		if next == "" {
			return out, nil
		}
		name, data = next, out
	}
}

func abortFailure(ctx context.Context) *failure {
	return &failure{name: ErrorAborted, cause: context.Cause(ctx).Error(), aborted: true}
}
