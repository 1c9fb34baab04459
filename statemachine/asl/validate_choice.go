package asl

import (
	"fmt"
	"strings"
)

func (v *validator) choice(where string, m *Machine, s *Choice) {
	if len(s.Choices) == 0 {
		v.add(join(where, "Choices"), "must contain at least one rule")
	}
	for i, r := range s.Choices {
		v.choiceRule(fmt.Sprintf("%s.Choices[%d]", where, i), m, r, true)
	}
	if s.Default != "" {
		v.target(join(where, "Default"), m, s.Default)
	}
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
		if r.Variable == nil {
			v.add(join(where, "Variable"), "is required with %s", r.Operator)
		} else {
			v.path(join(where, "Variable"), &r.Variable.Path, true)
		}
		v.operand(join(where, r.Operator), r)
	} else if r.Variable != nil {
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

// operand checks a comparison's operand against its operator's kind.
func (v *validator) operand(where string, r *ChoiceRule) {
	switch Operators[r.Operator] {
	case OperandString:
		if _, ok := r.Value.(string); !ok {
			v.add(where, "operand must be a string")
		}
	case OperandNumber:
		if _, ok := r.Value.(float64); !ok {
			v.add(where, "operand must be a number")
		}
	case OperandBool:
		if _, ok := r.Value.(bool); !ok {
			v.add(where, "operand must be a boolean")
		}
	case OperandTimestamp:
		if r.Timestamp == nil {
			v.add(where, "operand must be a timestamp string")
		} else {
			v.timestamp(where, r.Timestamp)
		}
	case OperandPath:
		if r.Path == nil {
			v.add(where, "operand must be a path string")
		} else {
			v.path(where, &r.Path.Path, true)
		}
	}
}
