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

// compiler collects the first error so compileNode reads straight through;
// Validate has already rejected anything that could fail here.
type compiler struct{ err error }

func (c *compiler) optPath(np asl.NullablePath) optPath {
	p, err := compileOptPath(np)
	c.set(err)
	return p
}

func (c *compiler) resultPath(np asl.NullablePath) resultPath {
	p, err := compileResultPath(np)
	c.set(err)
	return p
}

func (c *compiler) tmpl(raw []byte) tmpl {
	t, err := compileTemplate(raw)
	c.set(err)
	return t
}

func (c *compiler) ref(s string) *asl.Path {
	if s == "" {
		return nil
	}
	p, err := asl.ParseReferencePath(s)
	c.set(err)
	return p
}

// dynamic compiles a ".$"-style value (path or intrinsic) as a template.
func (c *compiler) dynamic(s string) tmpl {
	if s == "" {
		return nil
	}
	if asl.LooksLikeIntrinsic(s) {
		call, err := asl.ParseIntrinsic(s)
		c.set(err)
		return &tCall{field: s, call: call}
	}
	p, err := asl.ParsePath(s)
	c.set(err)
	return &tPath{field: s, p: p}
}

func (c *compiler) set(err error) {
	if err != nil && c.err == nil {
		c.err = err
	}
}

func (c *compiler) io(n *node, io asl.IO) {
	n.input = c.optPath(io.InputPath)
	n.output = c.optPath(io.OutputPath)
}

func (c *compiler) handlers(n *node, retry []asl.Retrier, catch []asl.Catcher) {
	for i := range retry {
		n.retriers = append(n.retriers, newRetrier(&retry[i]))
	}
	for _, k := range catch {
		n.catchers = append(n.catchers, &catcher{errorEquals: k.ErrorEquals, next: k.Next, result: c.resultPath(k.ResultPath)})
	}
}

func compileNode(name string, st asl.State) (*node, error) {
	n := &node{name: name, kind: st.StateType()}
	n.next, n.end = asl.Transition(st)
	c := &compiler{}
	switch s := st.(type) {
	case *asl.Task:
		c.io(n, s.IO)
		n.resource = s.Resource
		n.params = c.tmpl(s.Parameters)
		n.selector = c.tmpl(s.ResultSelector)
		n.result = c.resultPath(s.ResultPath)
		c.handlers(n, s.Retry, s.Catch)
		if s.TimeoutSeconds != nil {
			n.timeout = time.Duration(*s.TimeoutSeconds) * time.Second
		}
		if s.HeartbeatSeconds != nil {
			n.heartbeat = time.Duration(*s.HeartbeatSeconds) * time.Second
		}
		n.timeoutPath = c.ref(s.TimeoutSecondsPath)
		n.heartbeatPath = c.ref(s.HeartbeatSecondsPath)
	case *asl.Pass:
		c.io(n, s.IO)
		n.params = c.tmpl(s.Parameters)
		n.result = c.resultPath(s.ResultPath)
		if s.Result != nil {
			// Result is literal data: ".$" keys in it are not evaluated.
			v, err := literal(s.Result)
			c.set(err)
			n.passResult, n.hasResult = v, true
		}
	case *asl.Choice:
		c.io(n, s.IO)
		n.defaultNext = s.Default
		for _, r := range s.Choices {
			cr, err := compileRule(r)
			c.set(err)
			n.rules = append(n.rules, cr)
		}
	case *asl.Wait:
		c.io(n, s.IO)
		switch {
		case s.Seconds != nil:
			n.waitKind, n.waitFor = waitSeconds, time.Duration(*s.Seconds)*time.Second
		case s.Timestamp != "":
			t, err := asl.ParseTimestamp(s.Timestamp)
			c.set(err)
			n.waitKind, n.waitTimestamp = waitTimestamp, t
		case s.SecondsPath != "":
			n.waitKind, n.waitSecondsPath = waitSecondsPath, c.ref(s.SecondsPath)
		default:
			n.waitKind, n.waitTimestampPath = waitTimestampPath, c.ref(s.TimestampPath)
		}
	case *asl.Succeed:
		c.io(n, s.IO)
	case *asl.Fail:
		n.errName, n.cause = s.Error, s.Cause
		n.errDynamic = c.dynamic(s.ErrorPath)
		n.causeDyn = c.dynamic(s.CausePath)
	case *asl.Parallel:
		c.io(n, s.IO)
		n.params = c.tmpl(s.Parameters)
		n.selector = c.tmpl(s.ResultSelector)
		n.result = c.resultPath(s.ResultPath)
		c.handlers(n, s.Retry, s.Catch)
		for _, b := range s.Branches {
			m, err := compileMachine(b)
			c.set(err)
			n.branches = append(n.branches, m)
		}
	case *asl.Map:
		c.io(n, s.IO)
		n.selector = c.tmpl(s.ResultSelector)
		n.result = c.resultPath(s.ResultPath)
		c.handlers(n, s.Retry, s.Catch)
		n.mp = c.mapSpec(name, s)
	default:
		return nil, fmt.Errorf("unsupported state type %T", st)
	}
	return n, c.err
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
