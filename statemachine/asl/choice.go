package asl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// ChoiceRule is a Choice state rule: a comparison (Variable + one operator),
// or a boolean combination (And, Or, Not). Top-level rules carry Next.
type ChoiceRule struct {
	Variable *ReferencePath
	Operator string // e.g. "StringEquals"; empty for And/Or/Not
	Value    any    // the operand as decoded JSON (string, float64, bool)
	// The operand parsed once: the path of a ...Path operator, the time of
	// a Timestamp... operator. Nil when Value is not a string.
	Path      *ReferencePath
	Timestamp *Timestamp
	And       []*ChoiceRule
	Or        []*ChoiceRule
	Not       *ChoiceRule
	Next      string
	Comment   string

	// extraOperators lists further operators found on the same rule, which
	// Validate reports (a rule takes exactly one).
	extraOperators []string
}

// OperandKind says what a comparison operator's operand must be.
type OperandKind int

// Operand kinds.
const (
	OperandString OperandKind = iota
	OperandNumber
	OperandBool
	OperandTimestamp
	OperandPath
)

// Operators maps every comparison operator to its operand kind.
var Operators = map[string]OperandKind{}

func init() {
	for _, cmp := range []string{"Equals", "LessThan", "GreaterThan", "LessThanEquals", "GreaterThanEquals"} {
		Operators["String"+cmp] = OperandString
		Operators["Numeric"+cmp] = OperandNumber
		Operators["Timestamp"+cmp] = OperandTimestamp
		Operators["String"+cmp+"Path"] = OperandPath
		Operators["Numeric"+cmp+"Path"] = OperandPath
		Operators["Timestamp"+cmp+"Path"] = OperandPath
	}
	Operators["StringMatches"] = OperandString
	Operators["BooleanEquals"] = OperandBool
	Operators["BooleanEqualsPath"] = OperandPath
	for _, is := range []string{"IsPresent", "IsNull", "IsNumeric", "IsString", "IsBoolean", "IsTimestamp"} {
		Operators[is] = OperandBool
	}
}

// UnmarshalJSON decodes a rule strictly.
func (r *ChoiceRule) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("choice rule must be an object")
	}
	*r = ChoiceRule{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		var err error
		switch k {
		case "Variable":
			err = json.Unmarshal(v, &r.Variable)
		case "Next":
			err = json.Unmarshal(v, &r.Next)
		case "Comment":
			err = json.Unmarshal(v, &r.Comment)
		case "And":
			err = json.Unmarshal(v, &r.And)
			if err == nil && r.And == nil {
				r.And = []*ChoiceRule{}
			}
		case "Or":
			err = json.Unmarshal(v, &r.Or)
			if err == nil && r.Or == nil {
				r.Or = []*ChoiceRule{}
			}
		case "Not":
			err = json.Unmarshal(v, &r.Not)
		default:
			if _, ok := Operators[k]; !ok {
				return fmt.Errorf("choice rule: unknown field %q", k)
			}
			if r.Operator != "" {
				r.extraOperators = append(r.extraOperators, k)
				continue
			}
			r.Operator = k
			err = json.Unmarshal(v, &r.Value)
			r.parseOperand()
		}
		if err != nil {
			return fmt.Errorf("choice rule field %q: %w", k, err)
		}
	}
	return nil
}

// parseOperand parses a string operand the operator reads as a path or a
// timestamp; Validate reports a malformed one, or one of the wrong type.
func (r *ChoiceRule) parseOperand() {
	s, ok := r.Value.(string)
	if !ok {
		return
	}
	switch Operators[r.Operator] {
	case OperandPath:
		p := NewReferencePath(s)
		r.Path = &p
	case OperandTimestamp:
		t := NewTimestamp(s)
		r.Timestamp = &t
	}
}

// MarshalJSON writes the rule back in ASL form.
func (r *ChoiceRule) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	field := func(k string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&buf, "%q:", k)
		buf.Write(b)
		return nil
	}
	var err error
	set := func(k string, v any) {
		if err == nil {
			err = field(k, v)
		}
	}
	if r.Variable != nil {
		set("Variable", r.Variable)
	}
	switch {
	case r.Operator == "":
	case r.Path != nil:
		set(r.Operator, r.Path)
	case r.Timestamp != nil:
		set(r.Operator, r.Timestamp)
	default:
		set(r.Operator, r.Value)
	}
	if r.And != nil {
		set("And", r.And)
	}
	if r.Or != nil {
		set("Or", r.Or)
	}
	if r.Not != nil {
		set("Not", r.Not)
	}
	if r.Next != "" {
		set("Next", r.Next)
	}
	if r.Comment != "" {
		set("Comment", r.Comment)
	}
	buf.WriteByte('}')
	return buf.Bytes(), err
}
