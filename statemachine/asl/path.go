package asl

import (
	"fmt"
	"strconv"
	"strings"
)

// StepKind is the kind of one step of a Path.
type StepKind int

const (
	// StepField selects an object member by name.
	StepField StepKind = iota
	// StepIndex selects an array element by position.
	StepIndex
	// StepWildcard selects every member of an object or element of an array.
	StepWildcard
)

// Step is one selector of a Path.
type Step struct {
	Kind  StepKind
	Field string
	Index int
}

// Path is a parsed JSONPath in the subset ASL uses: a root ($ for the state's
// data, $$ for the context object) followed by dot or bracket members, array
// indices and [*] / .* wildcards. Filters, slices and deep scans are rejected.
type Path struct {
	Raw     string
	Context bool // rooted at $$ (the context object)
	Steps   []Step
}

// IsReference reports whether p selects at most one node (no wildcards), as
// ASL requires of reference paths such as ResultPath.
func (p *Path) IsReference() bool {
	for _, s := range p.Steps {
		if s.Kind == StepWildcard {
			return false
		}
	}
	return true
}

// String returns the source text of the path.
func (p *Path) String() string { return p.Raw }

// ParsePath parses a JSONPath in the ASL subset.
func ParsePath(s string) (*Path, error) {
	p := &Path{Raw: s}
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("path %q must start with $", s)
	}
	i := 1
	if strings.HasPrefix(s, "$$") {
		p.Context = true
		i = 2
	}
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			if i < len(s) && s[i] == '.' {
				return nil, fmt.Errorf("path %q: deep scan (..) is not supported", s)
			}
			start := i
			for i < len(s) && s[i] != '.' && s[i] != '[' {
				if s[i] == ']' || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' {
					return nil, fmt.Errorf("path %q: unexpected %q at offset %d", s, s[i], i)
				}
				i++
			}
			name := s[start:i]
			switch name {
			case "":
				return nil, fmt.Errorf("path %q: empty member name at offset %d", s, start)
			case "*":
				p.Steps = append(p.Steps, Step{Kind: StepWildcard})
			default:
				p.Steps = append(p.Steps, Step{Kind: StepField, Field: name})
			}
		case '[':
			step, n, err := parseBracket(s, i)
			if err != nil {
				return nil, err
			}
			p.Steps = append(p.Steps, step)
			i = n
		default:
			return nil, fmt.Errorf("path %q: unexpected %q at offset %d", s, s[i], i)
		}
	}
	return p, nil
}

// parseBracket parses the bracket selector starting at s[i] == '[' and
// returns the offset just after its closing bracket.
func parseBracket(s string, i int) (Step, int, error) {
	i++
	if i >= len(s) {
		return Step{}, 0, fmt.Errorf("path %q: unterminated [", s)
	}
	switch c := s[i]; {
	case c == '\'' || c == '"':
		var b strings.Builder
		i++
		for {
			if i >= len(s) {
				return Step{}, 0, fmt.Errorf("path %q: unterminated string", s)
			}
			if s[i] == '\\' && i+1 < len(s) {
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
			if s[i] == c {
				break
			}
			b.WriteByte(s[i])
			i++
		}
		i++
		if i >= len(s) || s[i] != ']' {
			return Step{}, 0, fmt.Errorf("path %q: expected ] after quoted member", s)
		}
		return Step{Kind: StepField, Field: b.String()}, i + 1, nil
	case c == '*':
		if i+1 >= len(s) || s[i+1] != ']' {
			return Step{}, 0, fmt.Errorf("path %q: expected ] after *", s)
		}
		return Step{Kind: StepWildcard}, i + 2, nil
	case c >= '0' && c <= '9':
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i >= len(s) || s[i] != ']' {
			return Step{}, 0, fmt.Errorf("path %q: only integer indices, quoted members and * are supported inside []", s)
		}
		n, err := strconv.Atoi(s[start:i])
		if err != nil {
			return Step{}, 0, fmt.Errorf("path %q: bad index: %v", s, err)
		}
		return Step{Kind: StepIndex, Index: n}, i + 1, nil
	default:
		return Step{}, 0, fmt.Errorf("path %q: only integer indices, quoted members and * are supported inside []", s)
	}
}

// ParseReferencePath parses a path that must identify a single node.
func ParseReferencePath(s string) (*Path, error) {
	p, err := ParsePath(s)
	if err != nil {
		return nil, err
	}
	if !p.IsReference() {
		return nil, fmt.Errorf("reference path %q must not contain wildcards", s)
	}
	return p, nil
}
