package interp

import (
	"strings"
	"time"

	"github.com/docpipe/docpipe/statemachine/asl"
)

// rule is a compiled choice rule.
type rule struct {
	next     string
	op       string
	variable *asl.Path
	operand  any       // literal operand
	opPath   *asl.Path // operand of a ...Path operator
	opTime   time.Time // parsed Timestamp operand
	and, or  []*rule
	not      *rule
}

func compileRule(r *asl.ChoiceRule) *rule {
	c := &rule{next: r.Next, op: r.Operator, operand: r.Value, variable: refPath(r.Variable), opPath: refPath(r.Path)}
	if r.Timestamp != nil {
		c.opTime = r.Timestamp.Time
	}
	for _, a := range r.And {
		c.and = append(c.and, compileRule(a))
	}
	for _, o := range r.Or {
		c.or = append(c.or, compileRule(o))
	}
	if r.Not != nil {
		c.not = compileRule(r.Not)
	}
	return c
}

// eval evaluates the rule. A comparison whose Variable (or operand path) is
// missing fails with States.Runtime, as on Step Functions; a value of the
// wrong type simply does not match.
func (r *rule) eval(env *evalEnv, data any) (bool, *failure) {
	switch {
	case r.and != nil:
		for _, s := range r.and {
			ok, f := s.eval(env, data)
			if f != nil || !ok {
				return false, f
			}
		}
		return true, nil
	case r.or != nil:
		for _, s := range r.or {
			ok, f := s.eval(env, data)
			if f != nil || ok {
				return ok, f
			}
		}
		return false, nil
	case r.not != nil:
		ok, f := r.not.eval(env, data)
		return !ok, f
	}
	v, present := env.resolve(r.variable, data)
	want, _ := r.operand.(bool)
	switch r.op {
	case "IsPresent":
		return present == want, nil
	case "IsNull":
		return (present && v == nil) == want, nil
	case "IsNumeric":
		_, ok := v.(float64)
		return (present && ok) == want, nil
	case "IsString":
		_, ok := v.(string)
		return (present && ok) == want, nil
	case "IsBoolean":
		_, ok := v.(bool)
		return (present && ok) == want, nil
	case "IsTimestamp":
		s, ok := v.(string)
		if ok {
			_, err := asl.ParseTimestamp(s)
			ok = err == nil
		}
		return (present && ok) == want, nil
	}
	if !present {
		return false, runtimeFailure("Invalid path '%s': the choice state's variable could not be found in the input", r.variable.Raw)
	}
	operand := r.operand
	if r.opPath != nil {
		var ok bool
		if operand, ok = env.resolve(r.opPath, data); !ok {
			return false, runtimeFailure("Invalid path '%s': the choice state's %s operand could not be found in the input", r.opPath.Raw, r.op)
		}
	}
	op := strings.TrimSuffix(r.op, "Path")
	switch {
	case op == "StringMatches":
		s, ok1 := v.(string)
		p, ok2 := operand.(string)
		return ok1 && ok2 && wildcardMatch(p, s), nil
	case op == "BooleanEquals":
		a, ok1 := v.(bool)
		b, ok2 := operand.(bool)
		return ok1 && ok2 && a == b, nil
	case strings.HasPrefix(op, "String"):
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		return ok1 && ok2 && compare(strings.Compare(a, b), op[len("String"):]), nil
	case strings.HasPrefix(op, "Numeric"):
		a, ok1 := v.(float64)
		b, ok2 := operand.(float64)
		if !ok1 || !ok2 {
			return false, nil
		}
		c := 0
		if a < b {
			c = -1
		} else if a > b {
			c = 1
		}
		return compare(c, op[len("Numeric"):]), nil
	case strings.HasPrefix(op, "Timestamp"):
		s, ok := v.(string)
		if !ok {
			return false, nil
		}
		a, err := asl.ParseTimestamp(s)
		if err != nil {
			return false, nil
		}
		b := r.opTime
		if r.opPath != nil {
			bs, ok := operand.(string)
			if !ok {
				return false, nil
			}
			if b, err = asl.ParseTimestamp(bs); err != nil {
				return false, nil
			}
		}
		return compare(a.Compare(b), op[len("Timestamp"):]), nil
	}
	return false, runtimeFailure("unsupported choice operator %s", r.op)
}

func compare(c int, cmp string) bool {
	switch cmp {
	case "Equals":
		return c == 0
	case "LessThan":
		return c < 0
	case "GreaterThan":
		return c > 0
	case "LessThanEquals":
		return c <= 0
	case "GreaterThanEquals":
		return c >= 0
	}
	return false
}

// wildcardMatch matches s against pattern where * matches any run of
// characters, \* a literal star and \\ a literal backslash.
func wildcardMatch(pattern, s string) bool {
	// Split the pattern into literal pieces separated by unescaped stars.
	var pieces []string
	var cur strings.Builder
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\' && i+1 < len(pattern):
			i++
			cur.WriteByte(pattern[i])
		case c == '*':
			pieces = append(pieces, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	pieces = append(pieces, cur.String())
	if len(pieces) == 1 {
		return s == pieces[0]
	}
	if !strings.HasPrefix(s, pieces[0]) {
		return false
	}
	s = s[len(pieces[0]):]
	last := pieces[len(pieces)-1]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
