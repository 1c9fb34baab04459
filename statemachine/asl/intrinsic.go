package asl

import (
	"fmt"
	"strconv"
	"strings"
)

// ArgKind is the kind of an intrinsic function argument.
type ArgKind int

const (
	// ArgLiteral is a string, number, boolean or null literal.
	ArgLiteral ArgKind = iota
	// ArgPath is a JSONPath into the state's data or the context object.
	ArgPath
	// ArgCall is a nested intrinsic function call.
	ArgCall
)

// Arg is one argument of an intrinsic function call.
type Arg struct {
	Kind  ArgKind
	Value any // literal value: string, float64, bool or nil
	// Raw is a string literal's text with only \' and \\ resolved, so that
	// States.Format can still tell an escaped \{ from a placeholder.
	Raw  string
	Path *Path
	Call *Intrinsic
}

// Intrinsic is a parsed intrinsic function call such as
// States.Format('{} items', States.ArrayLength($.items)).
type Intrinsic struct {
	Name string
	Args []Arg
}

// arity gives the minimum and maximum argument counts (-1: unbounded) of
// every intrinsic function the interpreter implements.
var arity = map[string][2]int{
	"States.Format":         {1, -1},
	"States.StringToJson":   {1, 1},
	"States.JsonToString":   {1, 1},
	"States.Array":          {0, -1},
	"States.ArrayPartition": {2, 2},
	"States.ArrayContains":  {2, 2},
	"States.ArrayRange":     {3, 3},
	"States.ArrayGetItem":   {2, 2},
	"States.ArrayLength":    {1, 1},
	"States.ArrayUnique":    {1, 1},
	"States.Base64Encode":   {1, 1},
	"States.Base64Decode":   {1, 1},
	"States.Hash":           {2, 2},
	"States.JsonMerge":      {3, 3},
	"States.MathRandom":     {2, 3},
	"States.MathAdd":        {2, 2},
	"States.StringSplit":    {2, 2},
	"States.UUID":           {0, 0},
}

// LooksLikeIntrinsic reports whether a ".$" value is meant as an intrinsic
// function call rather than a path.
func LooksLikeIntrinsic(s string) bool {
	return strings.HasPrefix(s, "States.")
}

// ParseIntrinsic parses an intrinsic function call, checking function names
// and argument counts.
func ParseIntrinsic(s string) (*Intrinsic, error) {
	p := &intrinsicParser{src: s}
	call, err := p.call()
	if err != nil {
		return nil, fmt.Errorf("intrinsic %q: %w", s, err)
	}
	p.skipSpace()
	if p.pos != len(s) {
		return nil, fmt.Errorf("intrinsic %q: unexpected text at offset %d", s, p.pos)
	}
	return call, nil
}

type intrinsicParser struct {
	src string
	pos int
}

func (p *intrinsicParser) skipSpace() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
}

func (p *intrinsicParser) call() (*Intrinsic, error) {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) && (isIdent(p.src[p.pos]) || p.src[p.pos] == '.') {
		p.pos++
	}
	name := p.src[start:p.pos]
	lim, ok := arity[name]
	if !ok {
		return nil, fmt.Errorf("unknown function %q", name)
	}
	p.skipSpace()
	if p.pos >= len(p.src) || p.src[p.pos] != '(' {
		return nil, fmt.Errorf("expected ( after %s", name)
	}
	p.pos++
	call := &Intrinsic{Name: name}
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ')' {
		p.pos++
	} else {
		for {
			arg, err := p.arg()
			if err != nil {
				return nil, err
			}
			call.Args = append(call.Args, arg)
			p.skipSpace()
			if p.pos >= len(p.src) {
				return nil, fmt.Errorf("unterminated call to %s", name)
			}
			if p.src[p.pos] == ')' {
				p.pos++
				break
			}
			if p.src[p.pos] != ',' {
				return nil, fmt.Errorf("expected , or ) at offset %d", p.pos)
			}
			p.pos++
		}
	}
	if n := len(call.Args); n < lim[0] || (lim[1] >= 0 && n > lim[1]) {
		if lim[1] < 0 {
			return nil, fmt.Errorf("%s takes at least %d arguments, got %d", name, lim[0], n)
		}
		if lim[0] == lim[1] {
			return nil, fmt.Errorf("%s takes %d arguments, got %d", name, lim[0], n)
		}
		return nil, fmt.Errorf("%s takes %d to %d arguments, got %d", name, lim[0], lim[1], n)
	}
	return call, nil
}

func isIdent(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *intrinsicParser) arg() (Arg, error) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return Arg{}, fmt.Errorf("missing argument")
	}
	rest := p.src[p.pos:]
	switch c := rest[0]; {
	case c == '\'':
		return p.stringLit()
	case c == '$':
		return p.pathArg()
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.pos
		p.pos++
		for p.pos < len(p.src) && strings.IndexByte("0123456789.eE+-", p.src[p.pos]) >= 0 {
			p.pos++
		}
		f, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		if err != nil {
			return Arg{}, fmt.Errorf("bad number %q", p.src[start:p.pos])
		}
		return Arg{Kind: ArgLiteral, Value: f}, nil
	case strings.HasPrefix(rest, "true") && !identAt(rest, 4):
		p.pos += 4
		return Arg{Kind: ArgLiteral, Value: true}, nil
	case strings.HasPrefix(rest, "false") && !identAt(rest, 5):
		p.pos += 5
		return Arg{Kind: ArgLiteral, Value: false}, nil
	case strings.HasPrefix(rest, "null") && !identAt(rest, 4):
		p.pos += 4
		return Arg{Kind: ArgLiteral, Value: nil}, nil
	case strings.HasPrefix(rest, "States."):
		call, err := p.call()
		if err != nil {
			return Arg{}, err
		}
		return Arg{Kind: ArgCall, Call: call}, nil
	default:
		return Arg{}, fmt.Errorf("unexpected %q at offset %d", c, p.pos)
	}
}

func identAt(s string, i int) bool { return i < len(s) && isIdent(s[i]) }

// stringLit reads a single-quoted literal. \' and \\ are resolved in Raw;
// Value additionally resolves \{ and \}.
func (p *intrinsicParser) stringLit() (Arg, error) {
	p.pos++
	var raw, val strings.Builder
	for {
		if p.pos >= len(p.src) {
			return Arg{}, fmt.Errorf("unterminated string literal")
		}
		c := p.src[p.pos]
		if c == '\'' {
			p.pos++
			return Arg{Kind: ArgLiteral, Value: val.String(), Raw: raw.String()}, nil
		}
		if c == '\\' {
			if p.pos+1 >= len(p.src) {
				return Arg{}, fmt.Errorf("dangling \\ in string literal")
			}
			n := p.src[p.pos+1]
			switch n {
			case '\'', '\\':
				raw.WriteByte(n)
				if n == '\\' {
					// Keep the escape in Raw so Format sees \\ as a literal backslash.
					raw.WriteByte(n)
				}
			case '{', '}':
				raw.WriteByte('\\')
				raw.WriteByte(n)
			default:
				return Arg{}, fmt.Errorf("invalid escape \\%c in string literal", n)
			}
			val.WriteByte(n)
			p.pos += 2
			continue
		}
		raw.WriteByte(c)
		val.WriteByte(c)
		p.pos++
	}
}

// pathArg reads a path argument up to the next top-level , or ).
func (p *intrinsicParser) pathArg() (Arg, error) {
	start := p.pos
	depth := 0
	var quote byte
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if quote != 0 {
			if c == '\\' {
				p.pos += 2
				continue
			}
			if c == quote {
				quote = 0
			}
			p.pos++
			continue
		}
		if c == '[' {
			depth++
		} else if c == ']' {
			depth--
		} else if (c == '\'' || c == '"') && depth > 0 {
			quote = c
		} else if depth == 0 && (c == ',' || c == ')' || c == ' ') {
			break
		}
		p.pos++
	}
	path, err := ParsePath(p.src[start:p.pos])
	if err != nil {
		return Arg{}, err
	}
	return Arg{Kind: ArgPath, Path: path}, nil
}
