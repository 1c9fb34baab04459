package asl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
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

// Error names with special matching rules.
const (
	ErrorAll                    = "States.ALL"
	ErrorTaskFailed             = "States.TaskFailed"
	ErrorTimeout                = "States.Timeout"
	ErrorHeartbeatTimeout       = "States.HeartbeatTimeout"
	ErrorRuntime                = "States.Runtime"
	ErrorBranchFailed           = "States.BranchFailed"
	ErrorNoChoiceMatched        = "States.NoChoiceMatched"
	ErrorIntrinsicFailure       = "States.IntrinsicFailure"
	ErrorItemReaderFailed       = "States.ItemReaderFailed"
	ErrorExceedToleratedFailure = "States.ExceedToleratedFailureThreshold"
	ErrorDataLimitExceeded      = "States.DataLimitExceeded"
)

// MaxStateNameLength is the longest state name Step Functions accepts.
const MaxStateNameLength = 80

// Validate checks a parsed definition and returns a *ValidationError listing
// every problem, or nil.
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

// reachability reports states no path from StartAt reaches.
func (v *validator) reachability(where string, m *Machine) {
	if _, ok := m.States.ByName[m.StartAt]; !ok {
		return
	}
	seen := map[string]bool{}
	queue := []string{m.StartAt}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		st, ok := m.States.ByName[n]
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		queue = append(queue, successors(st)...)
	}
	for _, name := range m.States.Names {
		if !seen[name] {
			v.add(join(where, "States."+name), "state is unreachable from StartAt")
		}
	}
}

func successors(st State) []string {
	var out []string
	if next, _ := Transition(st); next != "" {
		out = append(out, next)
	}
	var catches []Catcher
	switch s := st.(type) {
	case *Task:
		catches = s.Catch
	case *Parallel:
		catches = s.Catch
	case *Map:
		catches = s.Catch
	case *Choice:
		for _, r := range s.Choices {
			if r != nil && r.Next != "" {
				out = append(out, r.Next)
			}
		}
		if s.Default != "" {
			out = append(out, s.Default)
		}
	}
	for _, c := range catches {
		out = append(out, c.Next)
	}
	return out
}

func (v *validator) target(where string, m *Machine, next string) {
	if _, ok := m.States.ByName[next]; !ok {
		v.add(where, "refers to unknown state %q", next)
	}
}

func (v *validator) flow(where string, m *Machine, f Flow) {
	switch {
	case f.Next != "" && f.End:
		v.add(where, "has both Next and End")
	case f.Next == "" && !f.End:
		v.add(where, "needs Next or End")
	case f.Next != "":
		v.target(join(where, "Next"), m, f.Next)
	}
}

func (v *validator) io(where string, io IO) {
	v.nullablePath(join(where, "InputPath"), io.InputPath, false)
	v.nullablePath(join(where, "OutputPath"), io.OutputPath, false)
}

func (v *validator) nullablePath(where string, p NullablePath, reference bool) {
	if !p.Set || p.Null {
		return
	}
	v.path(where, p.Path, reference, !reference)
}

// path checks a path; reference paths must select one node, and only
// non-reference paths may read the context object unless allowContext.
func (v *validator) path(where, s string, reference, allowContext bool) {
	var (
		p   *Path
		err error
	)
	if reference {
		p, err = ParseReferencePath(s)
	} else {
		p, err = ParsePath(s)
	}
	if err != nil {
		v.add(where, "%v", err)
		return
	}
	if p.Context && !allowContext {
		v.add(where, "path %q may not refer to the context object", s)
	}
}

func (v *validator) optPath(where, s string, reference bool) {
	if s != "" {
		v.path(where, s, reference, true)
	}
}

// template checks a payload template: every "x.$" key needs a string that is
// a valid path or intrinsic function call.
func (v *validator) template(where string, raw json.RawMessage) {
	if raw == nil {
		return
	}
	var t any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&t); err != nil {
		v.add(where, "invalid JSON: %v", err)
		return
	}
	if _, ok := t.(map[string]any); !ok {
		v.add(where, "must be a JSON object")
		return
	}
	v.templateValue(where, t)
}

func (v *validator) templateValue(where string, t any) {
	switch x := t.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			val := x[k]
			kw := where + "." + k
			if !strings.HasSuffix(k, ".$") {
				v.templateValue(kw, val)
				continue
			}
			if len(k) == 2 {
				v.add(kw, "field name is empty before .$")
			}
			s, ok := val.(string)
			if !ok {
				v.add(kw, "value of a .$ field must be a string")
				continue
			}
			v.dynamic(kw, s)
		}
	case []any:
		for i, e := range x {
			v.templateValue(fmt.Sprintf("%s[%d]", where, i), e)
		}
	}
}

// dynamic checks the value of a ".$" field.
func (v *validator) dynamic(where, s string) {
	if LooksLikeIntrinsic(s) {
		if _, err := ParseIntrinsic(s); err != nil {
			v.add(where, "%v", err)
		}
		return
	}
	v.path(where, s, false, true)
}

func (v *validator) errorEquals(where string, names []string, last bool) {
	if len(names) == 0 {
		v.add(join(where, "ErrorEquals"), "must list at least one error name")
	}
	for i, n := range names {
		if n == "" {
			v.add(fmt.Sprintf("%s.ErrorEquals[%d]", where, i), "error name is empty")
		}
		if n == ErrorAll {
			if len(names) != 1 {
				v.add(join(where, "ErrorEquals"), "States.ALL must appear alone")
			}
			if !last {
				v.add(join(where, "ErrorEquals"), "States.ALL must be in the last retrier or catcher")
			}
		}
	}
}

func (v *validator) retryCatch(where string, m *Machine, retry []Retrier, catch []Catcher) {
	for i, r := range retry {
		rw := fmt.Sprintf("%s.Retry[%d]", where, i)
		v.errorEquals(rw, r.ErrorEquals, i == len(retry)-1)
		if r.MaxAttempts != nil && *r.MaxAttempts < 0 {
			v.add(join(rw, "MaxAttempts"), "must be ≥ 0, got %d", *r.MaxAttempts)
		}
		if r.MaxAttempts != nil && *r.MaxAttempts > 99999999 {
			v.add(join(rw, "MaxAttempts"), "must be ≤ 99999999, got %d", *r.MaxAttempts)
		}
		if r.IntervalSeconds != nil && (*r.IntervalSeconds < 1 || *r.IntervalSeconds > 99999999) {
			v.add(join(rw, "IntervalSeconds"), "must be between 1 and 99999999, got %d", *r.IntervalSeconds)
		}
		if r.BackoffRate != nil && *r.BackoffRate < 1 {
			v.add(join(rw, "BackoffRate"), "must be ≥ 1.0, got %g", *r.BackoffRate)
		}
		if r.MaxDelaySeconds != nil && (*r.MaxDelaySeconds < 1 || *r.MaxDelaySeconds > 31622400) {
			v.add(join(rw, "MaxDelaySeconds"), "must be between 1 and 31622400, got %d", *r.MaxDelaySeconds)
		}
		if r.JitterStrategy != "" && r.JitterStrategy != JitterFull && r.JitterStrategy != JitterNone {
			v.add(join(rw, "JitterStrategy"), "must be FULL or NONE, got %q", r.JitterStrategy)
		}
	}
	for i, c := range catch {
		cw := fmt.Sprintf("%s.Catch[%d]", where, i)
		v.errorEquals(cw, c.ErrorEquals, i == len(catch)-1)
		if c.Next == "" {
			v.add(join(cw, "Next"), "is required")
		} else {
			v.target(join(cw, "Next"), m, c.Next)
		}
		v.nullablePath(join(cw, "ResultPath"), c.ResultPath, true)
	}
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
		v.nullablePath(join(where, "ResultPath"), s.ResultPath, true)
		v.retryCatch(where, m, s.Retry, s.Catch)
		v.timeouts(where, s)
	case *Pass:
		v.flow(where, m, s.Flow)
		v.io(where, s.IO)
		v.template(join(where, "Parameters"), s.Parameters)
		v.nullablePath(join(where, "ResultPath"), s.ResultPath, true)
		if s.Result != nil && !json.Valid(s.Result) {
			v.add(join(where, "Result"), "invalid JSON")
		}
	case *Choice:
		v.io(where, s.IO)
		if len(s.Choices) == 0 {
			v.add(join(where, "Choices"), "must contain at least one rule")
		}
		for i, r := range s.Choices {
			v.choiceRule(fmt.Sprintf("%s.Choices[%d]", where, i), m, r, true)
		}
		if s.Default != "" {
			v.target(join(where, "Default"), m, s.Default)
		}
	case *Wait:
		v.flow(where, m, s.Flow)
		v.io(where, s.IO)
		n := 0
		if s.Seconds != nil {
			n++
			if *s.Seconds < 0 {
				v.add(join(where, "Seconds"), "must be ≥ 0, got %d", *s.Seconds)
			}
		}
		if s.Timestamp != "" {
			n++
			if _, err := ParseTimestamp(s.Timestamp); err != nil {
				v.add(join(where, "Timestamp"), "%v", err)
			}
		}
		if s.SecondsPath != "" {
			n++
			v.path(join(where, "SecondsPath"), s.SecondsPath, true, true)
		}
		if s.TimestampPath != "" {
			n++
			v.path(join(where, "TimestampPath"), s.TimestampPath, true, true)
		}
		if n != 1 {
			v.add(where, "needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath (has %d)", n)
		}
	case *Succeed:
		v.io(where, s.IO)
	case *Fail:
		if s.Error != "" && s.ErrorPath != "" {
			v.add(where, "has both Error and ErrorPath")
		}
		if s.Cause != "" && s.CausePath != "" {
			v.add(where, "has both Cause and CausePath")
		}
		v.failPath(join(where, "ErrorPath"), s.ErrorPath)
		v.failPath(join(where, "CausePath"), s.CausePath)
	case *Parallel:
		v.flow(where, m, s.Flow)
		v.io(where, s.IO)
		v.template(join(where, "Parameters"), s.Parameters)
		v.template(join(where, "ResultSelector"), s.ResultSelector)
		v.nullablePath(join(where, "ResultPath"), s.ResultPath, true)
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

// failPath checks ErrorPath/CausePath, which may also be intrinsic calls.
func (v *validator) failPath(where, s string) {
	if s != "" {
		v.dynamic(where, s)
	}
}

func (v *validator) timeouts(where string, s *Task) {
	if s.TimeoutSeconds != nil && s.TimeoutSecondsPath != "" {
		v.add(where, "has both TimeoutSeconds and TimeoutSecondsPath")
	}
	if s.HeartbeatSeconds != nil && s.HeartbeatSecondsPath != "" {
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
	v.optPath(join(where, "TimeoutSecondsPath"), s.TimeoutSecondsPath, true)
	v.optPath(join(where, "HeartbeatSecondsPath"), s.HeartbeatSecondsPath, true)
}

func (v *validator) choiceRule(where string, m *Machine, r *ChoiceRule, top bool) {
	if r == nil {
		v.add(where, "rule is null")
		return
	}
	if top {
		if r.Next == "" {
			v.add(join(where, "Next"), "is required on a top-level rule")
		} else {
			v.target(join(where, "Next"), m, r.Next)
		}
	} else if r.Next != "" {
		v.add(join(where, "Next"), "is only allowed on top-level rules")
	}
	kinds := 0
	if r.Operator != "" {
		kinds++
	}
	if r.And != nil {
		kinds++
	}
	if r.Or != nil {
		kinds++
	}
	if r.Not != nil {
		kinds++
	}
	if len(r.extraOperators) > 0 {
		v.add(where, "has more than one comparison operator (%s and %s)", r.Operator, strings.Join(r.extraOperators, ", "))
	}
	if kinds != 1 {
		v.add(where, "needs exactly one of a comparison operator, And, Or, Not")
	}
	if r.Operator != "" {
		if r.Variable == "" {
			v.add(join(where, "Variable"), "is required with %s", r.Operator)
		} else {
			v.path(join(where, "Variable"), r.Variable, true, true)
		}
		v.operand(join(where, r.Operator), r.Operator, r.Value)
	} else if r.Variable != "" {
		v.add(join(where, "Variable"), "is only allowed with a comparison operator")
	}
	for i, c := range r.And {
		v.choiceRule(fmt.Sprintf("%s.And[%d]", where, i), m, c, false)
	}
	for i, c := range r.Or {
		v.choiceRule(fmt.Sprintf("%s.Or[%d]", where, i), m, c, false)
	}
	if r.And != nil && len(r.And) == 0 {
		v.add(join(where, "And"), "must not be empty")
	}
	if r.Or != nil && len(r.Or) == 0 {
		v.add(join(where, "Or"), "must not be empty")
	}
	if r.Not != nil {
		v.choiceRule(join(where, "Not"), m, r.Not, false)
	}
}

func (v *validator) operand(where, op string, val any) {
	switch Operators[op] {
	case OperandString:
		if _, ok := val.(string); !ok {
			v.add(where, "operand must be a string")
		}
	case OperandNumber:
		if _, ok := val.(float64); !ok {
			v.add(where, "operand must be a number")
		}
	case OperandBool:
		if _, ok := val.(bool); !ok {
			v.add(where, "operand must be a boolean")
		}
	case OperandTimestamp:
		s, ok := val.(string)
		if !ok {
			v.add(where, "operand must be a timestamp string")
		} else if _, err := ParseTimestamp(s); err != nil {
			v.add(where, "%v", err)
		}
	case OperandPath:
		s, ok := val.(string)
		if !ok {
			v.add(where, "operand must be a path string")
		} else {
			v.path(where, s, true, true)
		}
	}
}

func (v *validator) mapState(where string, m *Machine, s *Map) {
	v.flow(where, m, s.Flow)
	v.io(where, s.IO)
	v.template(join(where, "ResultSelector"), s.ResultSelector)
	v.nullablePath(join(where, "ResultPath"), s.ResultPath, true)
	v.retryCatch(where, m, s.Retry, s.Catch)
	if s.ItemSelector != nil && s.Parameters != nil {
		v.add(where, "has both ItemSelector and Parameters")
	}
	v.template(join(where, "ItemSelector"), s.ItemSelector)
	v.template(join(where, "Parameters"), s.Parameters)
	v.optPath(join(where, "ItemsPath"), s.ItemsPath, true)
	switch {
	case s.ItemProcessor != nil && s.Iterator != nil:
		v.add(where, "has both ItemProcessor and Iterator")
	case s.ItemProcessor == nil && s.Iterator == nil:
		v.add(where, "needs ItemProcessor (or Iterator)")
	case s.ItemProcessor != nil:
		v.machine(join(where, "ItemProcessor"), &s.ItemProcessor.Machine)
	default:
		v.machine(join(where, "Iterator"), s.Iterator)
	}
	distributed := false
	if pc := processorConfig(s); pc != nil {
		switch pc.Mode {
		case "", ModeInline:
		case ModeDistributed:
			distributed = true
		default:
			v.add(join(where, "ItemProcessor.ProcessorConfig.Mode"), "must be INLINE or DISTRIBUTED, got %q", pc.Mode)
		}
		if et := pc.ExecutionType; et != "" && et != "STANDARD" && et != "EXPRESS" {
			v.add(join(where, "ItemProcessor.ProcessorConfig.ExecutionType"), "must be STANDARD or EXPRESS, got %q", et)
		}
		if et := pc.ExecutionType; et != "" && !distributed {
			v.add(join(where, "ItemProcessor.ProcessorConfig.ExecutionType"), "is only allowed in DISTRIBUTED mode")
		}
	}
	if s.MaxConcurrency != nil && *s.MaxConcurrency < 0 {
		v.add(join(where, "MaxConcurrency"), "must be ≥ 0, got %d", *s.MaxConcurrency)
	}
	if s.MaxConcurrency != nil && s.MaxConcurrencyPath != "" {
		v.add(where, "has both MaxConcurrency and MaxConcurrencyPath")
	}
	v.optPath(join(where, "MaxConcurrencyPath"), s.MaxConcurrencyPath, true)
	if s.ToleratedFailurePercentage != nil && (*s.ToleratedFailurePercentage < 0 || *s.ToleratedFailurePercentage > 100) {
		v.add(join(where, "ToleratedFailurePercentage"), "must be between 0 and 100, got %g", *s.ToleratedFailurePercentage)
	}
	if s.ToleratedFailureCount != nil && *s.ToleratedFailureCount < 0 {
		v.add(join(where, "ToleratedFailureCount"), "must be ≥ 0, got %d", *s.ToleratedFailureCount)
	}
	v.optPath(join(where, "ToleratedFailurePercentagePath"), s.ToleratedFailurePercentagePath, true)
	v.optPath(join(where, "ToleratedFailureCountPath"), s.ToleratedFailureCountPath, true)
	if len(s.Label) > 40 {
		v.add(join(where, "Label"), "must be at most 40 characters")
	}
	if !distributed {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"ItemReader", s.ItemReader != nil},
			{"ResultWriter", s.ResultWriter != nil},
			{"ToleratedFailurePercentage", s.ToleratedFailurePercentage != nil},
			{"ToleratedFailurePercentagePath", s.ToleratedFailurePercentagePath != ""},
			{"ToleratedFailureCount", s.ToleratedFailureCount != nil},
			{"ToleratedFailureCountPath", s.ToleratedFailureCountPath != ""},
			{"Label", s.Label != ""},
		} {
			if f.set {
				v.add(join(where, f.name), "is only allowed in DISTRIBUTED mode")
			}
		}
	}
	if r := s.ItemReader; r != nil {
		rw := join(where, "ItemReader")
		if r.Resource != ResourceS3GetObject {
			v.add(join(rw, "Resource"), "only %s is supported, got %q", ResourceS3GetObject, r.Resource)
		}
		if c := r.ReaderConfig; c != nil {
			if c.InputType != "" && c.InputType != ReaderInputTypeJSON {
				v.add(join(rw, "ReaderConfig.InputType"), "only JSON is supported, got %q", c.InputType)
			}
			if c.MaxItems != nil && *c.MaxItems < 0 {
				v.add(join(rw, "ReaderConfig.MaxItems"), "must be ≥ 0, got %d", *c.MaxItems)
			}
			v.optPath(join(rw, "ReaderConfig.MaxItemsPath"), c.MaxItemsPath, true)
		}
		v.template(join(rw, "Parameters"), r.Parameters)
		var params map[string]json.RawMessage
		if r.Parameters == nil || json.Unmarshal(r.Parameters, &params) != nil {
			v.add(join(rw, "Parameters"), "must be an object with Bucket and Key")
		} else {
			for _, k := range []string{"Bucket", "Key"} {
				_, plain := params[k]
				_, dyn := params[k+".$"]
				if !plain && !dyn {
					v.add(join(rw, "Parameters"), "needs %s (or %s.$)", k, k)
				}
			}
		}
	}
}

func processorConfig(s *Map) *ProcessorConfig {
	if s.ItemProcessor == nil {
		return nil
	}
	return s.ItemProcessor.ProcessorConfig
}

// ParseTimestamp parses an ASL timestamp (RFC 3339, upper-case T and Z).
func ParseTimestamp(s string) (time.Time, error) {
	if strings.ContainsAny(s, "tz") {
		return time.Time{}, fmt.Errorf("timestamp %q must use upper-case T and Z", s)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q is not RFC 3339", s)
	}
	return t, nil
}
