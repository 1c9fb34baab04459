package asl

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Problem is one validation finding, located by a path such as
// "States.Fan.ItemProcessor.States.Work.Retry[0]".
type Problem struct {
	Where   string
	Message string
}

func (p Problem) String() string {
	if p.Where == "" {
		return p.Message
	}
	return p.Where + ": " + p.Message
}

// ValidationError lists every problem found in a definition.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "asl: %d validation problem(s)", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// MaxStateNameLength is the longest state name Step Functions accepts.
const MaxStateNameLength = 80

// Validate checks a parsed definition and returns a *ValidationError listing
// every problem, or nil. Paths, templates and timestamps were parsed with
// the definition; those that did not parse are reported here, where they
// sit.
func Validate(sm *StateMachine) error {
	v := &validator{}
	if sm == nil {
		v.add("", "state machine is nil")
		return v.err()
	}
	if sm.QueryLanguage != "" && sm.QueryLanguage != QueryLanguageJSONPath {
		v.add("QueryLanguage", "only JSONPath is supported, got %q", sm.QueryLanguage)
	}
	if sm.TimeoutSeconds != nil && *sm.TimeoutSeconds <= 0 {
		v.add("TimeoutSeconds", "must be positive, got %d", *sm.TimeoutSeconds)
	}
	if sm.Version != "" && sm.Version != "1.0" {
		v.add("Version", "unsupported version %q", sm.Version)
	}
	v.machine("", &Machine{StartAt: sm.StartAt, States: sm.States})
	return v.err()
}

type validator struct {
	problems []Problem
}

func (v *validator) add(where, format string, args ...any) {
	v.problems = append(v.problems, Problem{Where: where, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems}
}

func join(prefix, s string) string {
	if prefix == "" {
		return s
	}
	return prefix + "." + s
}

func (v *validator) machine(where string, m *Machine) {
	if m == nil {
		v.add(where, "missing state machine")
		return
	}
	if m.States.Len() == 0 {
		v.add(join(where, "States"), "must contain at least one state")
	}
	if m.StartAt == "" {
		v.add(join(where, "StartAt"), "is required")
	} else if _, ok := m.States.ByName[m.StartAt]; !ok {
		v.add(join(where, "StartAt"), "refers to unknown state %q", m.StartAt)
	}
	for _, name := range m.States.Names {
		sw := join(where, "States."+name)
		if len(name) > MaxStateNameLength {
			v.add(sw, "state name is longer than %d characters", MaxStateNameLength)
		}
		v.state(sw, m, m.States.ByName[name])
	}
	v.reachability(where, m)
}

func (v *validator) state(where string, m *Machine, st State) {
	switch s := st.(type) {
	case *Task:
		v.flow(where, m, s.Flow)
		v.io(where, s.IO)
		if s.Resource == "" {
			v.add(join(where, "Resource"), "is required")
		}
		v.template(join(where, "Parameters"), s.Parameters)
		v.template(join(where, "ResultSelector"), s.ResultSelector)
		v.resultPath(join(where, "ResultPath"), s.ResultPath)
		v.retryCatch(where, m, s.Retry, s.Catch)
		v.timeouts(where, s)
	case *Pass:
		v.flow(where, m, s.Flow)
		v.io(where, s.IO)
		v.template(join(where, "Parameters"), s.Parameters)
		v.resultPath(join(where, "ResultPath"), s.ResultPath)
		if s.Result != nil && !json.Valid(s.Result) {
			v.add(join(where, "Result"), "invalid JSON")
		}
	case *Choice:
		v.io(where, s.IO)
		v.choice(where, m, s)
	case *Wait:
		v.flow(where, m, s.Flow)
		v.io(where, s.IO)
		v.wait(where, s)
	case *Succeed:
		v.io(where, s.IO)
	case *Fail:
		if s.Error != "" && s.ErrorPath != nil {
			v.add(where, "has both Error and ErrorPath")
		}
		if s.Cause != "" && s.CausePath != nil {
			v.add(where, "has both Cause and CausePath")
		}
		v.expr(join(where, "ErrorPath"), s.ErrorPath)
		v.expr(join(where, "CausePath"), s.CausePath)
	case *Parallel:
		v.flow(where, m, s.Flow)
		v.io(where, s.IO)
		v.template(join(where, "Parameters"), s.Parameters)
		v.template(join(where, "ResultSelector"), s.ResultSelector)
		v.resultPath(join(where, "ResultPath"), s.ResultPath)
		v.retryCatch(where, m, s.Retry, s.Catch)
		if len(s.Branches) == 0 {
			v.add(join(where, "Branches"), "must contain at least one branch")
		}
		for i, b := range s.Branches {
			v.machine(fmt.Sprintf("%s.Branches[%d]", where, i), b)
		}
	case *Map:
		v.mapState(where, m, s)
	default:
		v.add(where, "unsupported state %T", st)
	}
}

func (v *validator) timeouts(where string, s *Task) {
	if s.TimeoutSeconds != nil && s.TimeoutSecondsPath != nil {
		v.add(where, "has both TimeoutSeconds and TimeoutSecondsPath")
	}
	if s.HeartbeatSeconds != nil && s.HeartbeatSecondsPath != nil {
		v.add(where, "has both HeartbeatSeconds and HeartbeatSecondsPath")
	}
	if s.TimeoutSeconds != nil && *s.TimeoutSeconds <= 0 {
		v.add(join(where, "TimeoutSeconds"), "must be positive, got %d", *s.TimeoutSeconds)
	}
	if s.HeartbeatSeconds != nil && *s.HeartbeatSeconds <= 0 {
		v.add(join(where, "HeartbeatSeconds"), "must be positive, got %d", *s.HeartbeatSeconds)
	}
	if s.TimeoutSeconds != nil && s.HeartbeatSeconds != nil && *s.HeartbeatSeconds >= *s.TimeoutSeconds {
		v.add(join(where, "HeartbeatSeconds"), "must be smaller than TimeoutSeconds (%d ≥ %d)", *s.HeartbeatSeconds, *s.TimeoutSeconds)
	}
	v.optPath(join(where, "TimeoutSecondsPath"), s.TimeoutSecondsPath)
	v.optPath(join(where, "HeartbeatSecondsPath"), s.HeartbeatSecondsPath)
}

func (v *validator) wait(where string, s *Wait) {
	n := 0
	if s.Seconds != nil {
		n++
		if *s.Seconds < 0 {
			v.add(join(where, "Seconds"), "must be ≥ 0, got %d", *s.Seconds)
		}
	}
	if s.Timestamp != nil {
		n++
		v.timestamp(join(where, "Timestamp"), s.Timestamp)
	}
	if s.SecondsPath != nil {
		n++
		v.optPath(join(where, "SecondsPath"), s.SecondsPath)
	}
	if s.TimestampPath != nil {
		n++
		v.optPath(join(where, "TimestampPath"), s.TimestampPath)
	}
	if n != 1 {
		v.add(where, "needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath (has %d)", n)
	}
}

func (v *validator) timestamp(where string, t *Timestamp) {
	if t.err != nil {
		v.add(where, "%v", t.err)
	}
}
