// Package asl models Amazon States Language definitions: strict parsing,
// marshalling back to JSON, and validation that reports every problem at
// once. Only the JSONPath query language is supported.
package asl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// State type names.
const (
	TypeTask     = "Task"
	TypePass     = "Pass"
	TypeChoice   = "Choice"
	TypeWait     = "Wait"
	TypeSucceed  = "Succeed"
	TypeFail     = "Fail"
	TypeParallel = "Parallel"
	TypeMap      = "Map"
)

// Map processor modes and the only supported ItemReader resource.
const (
	ModeInline            = "INLINE"
	ModeDistributed       = "DISTRIBUTED"
	ExecutionStandard     = "STANDARD"
	ExecutionExpress      = "EXPRESS"
	ResourceS3GetObject   = "arn:aws:states:::s3:getObject"
	ReaderInputTypeJSON   = "JSON"
	JitterFull            = "FULL"
	JitterNone            = "NONE"
	QueryLanguageJSONPath = "JSONPath"
)

// StateMachine is a top-level definition.
type StateMachine struct {
	Comment        string `json:"Comment,omitempty"`
	StartAt        string `json:"StartAt"`
	States         States `json:"States"`
	TimeoutSeconds *int   `json:"TimeoutSeconds,omitempty"`
	Version        string `json:"Version,omitempty"`
	QueryLanguage  string `json:"QueryLanguage,omitempty"`
}

// Machine is a nested state machine: a Parallel branch or a Map processor.
type Machine struct {
	Comment string `json:"Comment,omitempty"`
	StartAt string `json:"StartAt"`
	States  States `json:"States"`
}

// States holds a machine's states in definition order.
type States struct {
	Names  []string
	ByName map[string]State
}

// Add appends a state; it replaces a state of the same name in place.
func (s *States) Add(name string, st State) {
	if s.ByName == nil {
		s.ByName = map[string]State{}
	}
	if _, ok := s.ByName[name]; !ok {
		s.Names = append(s.Names, name)
	}
	s.ByName[name] = st
}

// Len returns the number of states.
func (s States) Len() int { return len(s.Names) }

// State is one of *Task, *Pass, *Choice, *Wait, *Succeed, *Fail, *Parallel, *Map.
type State interface {
	// StateType returns the ASL "Type" value.
	StateType() string
}

// Flow holds the transition fields of states that can continue.
type Flow struct {
	Next string `json:"Next,omitempty"`
	End  bool   `json:"End,omitempty"`
}

// IO holds InputPath and OutputPath.
type IO struct {
	InputPath  NullablePath `json:"InputPath,omitzero"`
	OutputPath NullablePath `json:"OutputPath,omitzero"`
}

// Retrier is one entry of a Retry array.
type Retrier struct {
	ErrorEquals     []string `json:"ErrorEquals"`
	IntervalSeconds *int     `json:"IntervalSeconds,omitempty"`
	MaxAttempts     *int     `json:"MaxAttempts,omitempty"`
	BackoffRate     *float64 `json:"BackoffRate,omitempty"`
	MaxDelaySeconds *int     `json:"MaxDelaySeconds,omitempty"`
	JitterStrategy  string   `json:"JitterStrategy,omitempty"`
	Comment         string   `json:"Comment,omitempty"`
}

// Retrier defaults from the specification.
const (
	DefaultIntervalSeconds = 1
	DefaultMaxAttempts     = 3
	DefaultBackoffRate     = 2.0
)

// Interval returns IntervalSeconds or its default.
func (r *Retrier) Interval() int { return intOr(r.IntervalSeconds, DefaultIntervalSeconds) }

// Attempts returns MaxAttempts or its default.
func (r *Retrier) Attempts() int { return intOr(r.MaxAttempts, DefaultMaxAttempts) }

// Backoff returns BackoffRate or its default.
func (r *Retrier) Backoff() float64 {
	if r.BackoffRate == nil {
		return DefaultBackoffRate
	}
	return *r.BackoffRate
}

func intOr(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}

// Catcher is one entry of a Catch array.
type Catcher struct {
	ErrorEquals []string              `json:"ErrorEquals"`
	Next        string                `json:"Next"`
	ResultPath  NullableReferencePath `json:"ResultPath,omitzero"`
	Comment     string                `json:"Comment,omitempty"`
}

// Task runs a resource.
type Task struct {
	Type                 string                `json:"Type"`
	Comment              string                `json:"Comment,omitempty"`
	Resource             string                `json:"Resource"`
	Parameters           *Template             `json:"Parameters,omitempty"`
	ResultSelector       *Template             `json:"ResultSelector,omitempty"`
	ResultPath           NullableReferencePath `json:"ResultPath,omitzero"`
	TimeoutSeconds       *int                  `json:"TimeoutSeconds,omitempty"`
	TimeoutSecondsPath   *ReferencePath        `json:"TimeoutSecondsPath,omitempty"`
	HeartbeatSeconds     *int                  `json:"HeartbeatSeconds,omitempty"`
	HeartbeatSecondsPath *ReferencePath        `json:"HeartbeatSecondsPath,omitempty"`
	Credentials          json.RawMessage       `json:"Credentials,omitempty"`
	Retry                []Retrier             `json:"Retry,omitempty"`
	Catch                []Catcher             `json:"Catch,omitempty"`
	IO
	Flow
}

// Pass passes its input (or Result) through.
type Pass struct {
	Type       string                `json:"Type"`
	Comment    string                `json:"Comment,omitempty"`
	Result     json.RawMessage       `json:"Result,omitempty"` // literal data: ".$" keys are not evaluated
	Parameters *Template             `json:"Parameters,omitempty"`
	ResultPath NullableReferencePath `json:"ResultPath,omitzero"`
	IO
	Flow
}

// Choice branches on rules.
type Choice struct {
	Type    string        `json:"Type"`
	Comment string        `json:"Comment,omitempty"`
	Choices []*ChoiceRule `json:"Choices"`
	Default string        `json:"Default,omitempty"`
	IO
}

// Wait delays for a duration or until a timestamp.
type Wait struct {
	Type          string         `json:"Type"`
	Comment       string         `json:"Comment,omitempty"`
	Seconds       *int           `json:"Seconds,omitempty"`
	SecondsPath   *ReferencePath `json:"SecondsPath,omitempty"`
	Timestamp     *Timestamp     `json:"Timestamp,omitempty"`
	TimestampPath *ReferencePath `json:"TimestampPath,omitempty"`
	IO
	Flow
}

// Succeed ends the machine successfully.
type Succeed struct {
	Type    string `json:"Type"`
	Comment string `json:"Comment,omitempty"`
	IO
}

// Fail ends the machine with an error.
type Fail struct {
	Type      string `json:"Type"`
	Comment   string `json:"Comment,omitempty"`
	Error     string `json:"Error,omitempty"`
	ErrorPath *Expr  `json:"ErrorPath,omitempty"`
	Cause     string `json:"Cause,omitempty"`
	CausePath *Expr  `json:"CausePath,omitempty"`
}

// Parallel runs branches concurrently.
type Parallel struct {
	Type           string                `json:"Type"`
	Comment        string                `json:"Comment,omitempty"`
	Branches       []*Machine            `json:"Branches"`
	Parameters     *Template             `json:"Parameters,omitempty"`
	ResultSelector *Template             `json:"ResultSelector,omitempty"`
	ResultPath     NullableReferencePath `json:"ResultPath,omitzero"`
	Retry          []Retrier             `json:"Retry,omitempty"`
	Catch          []Catcher             `json:"Catch,omitempty"`
	IO
	Flow
}

// Map runs a processor once per item.
type Map struct {
	Type                           string                `json:"Type"`
	Comment                        string                `json:"Comment,omitempty"`
	ItemProcessor                  *ItemProcessor        `json:"ItemProcessor,omitempty"`
	Iterator                       *Machine              `json:"Iterator,omitempty"` // legacy form of ItemProcessor
	ItemsPath                      *ReferencePath        `json:"ItemsPath,omitempty"`
	ItemSelector                   *Template             `json:"ItemSelector,omitempty"`
	Parameters                     *Template             `json:"Parameters,omitempty"` // legacy form of ItemSelector
	ItemReader                     *ItemReader           `json:"ItemReader,omitempty"`
	ResultWriter                   json.RawMessage       `json:"ResultWriter,omitempty"` // parsed, not acted on
	MaxConcurrency                 *int                  `json:"MaxConcurrency,omitempty"`
	MaxConcurrencyPath             *ReferencePath        `json:"MaxConcurrencyPath,omitempty"`
	ToleratedFailurePercentage     *float64              `json:"ToleratedFailurePercentage,omitempty"`
	ToleratedFailurePercentagePath *ReferencePath        `json:"ToleratedFailurePercentagePath,omitempty"`
	ToleratedFailureCount          *int                  `json:"ToleratedFailureCount,omitempty"`
	ToleratedFailureCountPath      *ReferencePath        `json:"ToleratedFailureCountPath,omitempty"`
	Label                          string                `json:"Label,omitempty"`
	ResultSelector                 *Template             `json:"ResultSelector,omitempty"`
	ResultPath                     NullableReferencePath `json:"ResultPath,omitzero"`
	Retry                          []Retrier             `json:"Retry,omitempty"`
	Catch                          []Catcher             `json:"Catch,omitempty"`
	IO
	Flow
}

// Processor returns the iteration machine (ItemProcessor or Iterator).
func (m *Map) Processor() *Machine {
	if m.ItemProcessor != nil {
		return &m.ItemProcessor.Machine
	}
	return m.Iterator
}

// Distributed reports whether the Map runs in DISTRIBUTED mode.
func (m *Map) Distributed() bool {
	return m.ItemProcessor != nil && m.ItemProcessor.ProcessorConfig != nil &&
		m.ItemProcessor.ProcessorConfig.Mode == ModeDistributed
}

// Selector returns ItemSelector, or the legacy Parameters.
func (m *Map) Selector() *Template {
	if m.ItemSelector != nil {
		return m.ItemSelector
	}
	return m.Parameters
}

// ItemProcessor is a Map's processor with its configuration.
type ItemProcessor struct {
	ProcessorConfig *ProcessorConfig `json:"ProcessorConfig,omitempty"`
	Machine
}

// ProcessorConfig selects inline or distributed processing.
type ProcessorConfig struct {
	Mode          string `json:"Mode,omitempty"`
	ExecutionType string `json:"ExecutionType,omitempty"`
}

// ItemReader reads a distributed Map's items from an object.
type ItemReader struct {
	Resource     string        `json:"Resource"`
	ReaderConfig *ReaderConfig `json:"ReaderConfig,omitempty"`
	Parameters   *Template     `json:"Parameters,omitempty"`
}

// ReaderConfig configures an ItemReader.
type ReaderConfig struct {
	InputType    string         `json:"InputType,omitempty"`
	MaxItems     *int           `json:"MaxItems,omitempty"`
	MaxItemsPath *ReferencePath `json:"MaxItemsPath,omitempty"`
}

// StateType implementations.
func (*Task) StateType() string     { return TypeTask }
func (*Pass) StateType() string     { return TypePass }
func (*Choice) StateType() string   { return TypeChoice }
func (*Wait) StateType() string     { return TypeWait }
func (*Succeed) StateType() string  { return TypeSucceed }
func (*Fail) StateType() string     { return TypeFail }
func (*Parallel) StateType() string { return TypeParallel }
func (*Map) StateType() string      { return TypeMap }

// Transition returns a state's Next and End; terminal types (Succeed, Fail)
// report end, Choice reports neither.
func Transition(s State) (next string, end bool) {
	switch v := s.(type) {
	case *Task:
		return v.Next, v.End
	case *Pass:
		return v.Next, v.End
	case *Wait:
		return v.Next, v.End
	case *Parallel:
		return v.Next, v.End
	case *Map:
		return v.Next, v.End
	case *Succeed, *Fail:
		return "", true
	}
	return "", false
}

// Parse decodes a definition strictly: unknown fields, unknown state types
// and duplicate state names are errors. Call Validate for semantic checks.
func Parse(b []byte) (*StateMachine, error) {
	var sm StateMachine
	if err := strictDecode(b, &sm); err != nil {
		return nil, fmt.Errorf("asl: %w", err)
	}
	return &sm, nil
}

func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// UnmarshalJSON reads states in order, decoding each by its Type.
func (s *States) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("States must be an object")
	}
	*s = States{ByName: map[string]State{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("state %q: %w", name, err)
		}
		if _, dup := s.ByName[name]; dup {
			return fmt.Errorf("duplicate state name %q", name)
		}
		st, err := decodeState(raw)
		if err != nil {
			return fmt.Errorf("state %q: %w", name, err)
		}
		s.Add(name, st)
	}
	_, err = dec.Token()
	return err
}

func decodeState(raw json.RawMessage) (State, error) {
	var head struct {
		Type string `json:"Type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	var st State
	switch head.Type {
	case TypeTask:
		st = &Task{}
	case TypePass:
		st = &Pass{}
	case TypeChoice:
		st = &Choice{}
	case TypeWait:
		st = &Wait{}
	case TypeSucceed:
		st = &Succeed{}
	case TypeFail:
		st = &Fail{}
	case TypeParallel:
		st = &Parallel{}
	case TypeMap:
		st = &Map{}
	case "":
		return nil, errors.New("missing Type")
	default:
		return nil, fmt.Errorf("unknown state type %q", head.Type)
	}
	if err := strictDecode(raw, st); err != nil {
		return nil, err
	}
	return st, nil
}

// MarshalJSON writes states in order.
func (s States) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, name := range s.Names {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		buf.Write(k)
		buf.WriteByte(':')
		v, err := marshalState(s.ByName[name])
		if err != nil {
			return nil, fmt.Errorf("state %q: %w", name, err)
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshalState fills in Type so callers building states in Go need not.
func marshalState(st State) ([]byte, error) {
	switch v := st.(type) {
	case *Task:
		c := *v
		c.Type = TypeTask
		return json.Marshal(&c)
	case *Pass:
		c := *v
		c.Type = TypePass
		return json.Marshal(&c)
	case *Choice:
		c := *v
		c.Type = TypeChoice
		return json.Marshal(&c)
	case *Wait:
		c := *v
		c.Type = TypeWait
		return json.Marshal(&c)
	case *Succeed:
		c := *v
		c.Type = TypeSucceed
		return json.Marshal(&c)
	case *Fail:
		c := *v
		c.Type = TypeFail
		return json.Marshal(&c)
	case *Parallel:
		c := *v
		c.Type = TypeParallel
		return json.Marshal(&c)
	case *Map:
		c := *v
		c.Type = TypeMap
		return json.Marshal(&c)
	}
	return nil, fmt.Errorf("unsupported state %T", st)
}
