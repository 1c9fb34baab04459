package asl

import (
	"encoding/json"
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
//
// A Path decoded from a definition keeps its source text even when it does
// not parse; Validate reports the reason at the field's location.
type Path struct {
	Raw     string
	Context bool // rooted at $$ (the context object)
	Steps   []Step
	err     error
}

// NewPath parses s; a malformed path is kept and reported by Validate.
func NewPath(s string) Path {
	p, err := ParsePath(s)
	if err != nil {
		return Path{Raw: s, err: err}
	}
	return *p
}

// UnmarshalJSON reads a path string, keeping a malformed one for Validate.
func (p *Path) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("path must be a string")
	}
	*p = NewPath(s)
	return nil
}

// MarshalJSON writes the source text.
func (p Path) MarshalJSON() ([]byte, error) { return json.Marshal(p.Raw) }

// ReferencePath is a path that must select a single node (no wildcards):
// ResultPath, Choice Variable, the *Path fields that read one value.
type ReferencePath struct{ Path }

// NewReferencePath parses s as a reference path; a malformed one is kept
// and reported by Validate.
func NewReferencePath(s string) ReferencePath {
	return ReferencePath{NewPath(s)}.checked()
}

// UnmarshalJSON reads a reference path string.
func (p *ReferencePath) UnmarshalJSON(b []byte) error {
	if err := p.Path.UnmarshalJSON(b); err != nil {
		return err
	}
	*p = p.checked()
	return nil
}

func (p ReferencePath) checked() ReferencePath {
	if p.err == nil && !p.IsReference() {
		p.err = fmt.Errorf("reference path %q must not contain wildcards", p.Raw)
	}
	return p
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
	p := NewReferencePath(s)
	if p.err != nil {
		return nil, p.err
	}
	return &p.Path, nil
}

// IsRoot reports whether p is "$" (the whole input), which the InputPath,
// OutputPath and ResultPath fields treat as no path at all.
func (p *Path) IsRoot() bool { return !p.Context && len(p.Steps) == 0 && p.err == nil }

// NullablePath is InputPath or OutputPath: absence (the default "$")
// differs from an explicit JSON null (an empty object).
type NullablePath struct {
	Set  bool // the field was present
	Null bool // the field was JSON null
	Path Path // the path when present and not null
}

// PathOf returns a present, non-null NullablePath.
func PathOf(s string) NullablePath { return NullablePath{Set: true, Path: NewPath(s)} }

// NullPath returns an explicit JSON null path.
func NullPath() NullablePath { return NullablePath{Set: true, Null: true} }

// IsZero reports absence, so `omitzero` drops an unset path.
func (p NullablePath) IsZero() bool { return !p.Set }

// UnmarshalJSON accepts a string or null.
func (p *NullablePath) UnmarshalJSON(b []byte) error {
	*p = NullablePath{Set: true, Null: string(b) == "null"}
	if p.Null {
		return nil
	}
	if err := p.Path.UnmarshalJSON(b); err != nil {
		return fmt.Errorf("path must be a string or null")
	}
	return nil
}

// MarshalJSON writes a string or null.
func (p NullablePath) MarshalJSON() ([]byte, error) {
	if p.Null || !p.Set {
		return []byte("null"), nil
	}
	return p.Path.MarshalJSON()
}

// NullableReferencePath is a ResultPath: absent means "$" (the result
// replaces the input), JSON null discards the result.
type NullableReferencePath struct {
	Set  bool
	Null bool
	Path ReferencePath
}

// ReferencePathOf returns a present, non-null NullableReferencePath.
func ReferencePathOf(s string) NullableReferencePath {
	return NullableReferencePath{Set: true, Path: NewReferencePath(s)}
}

// NullReferencePath returns an explicit JSON null reference path.
func NullReferencePath() NullableReferencePath { return NullableReferencePath{Set: true, Null: true} }

// IsZero reports absence, so `omitzero` drops an unset path.
func (p NullableReferencePath) IsZero() bool { return !p.Set }

// UnmarshalJSON accepts a string or null.
func (p *NullableReferencePath) UnmarshalJSON(b []byte) error {
	*p = NullableReferencePath{Set: true, Null: string(b) == "null"}
	if p.Null {
		return nil
	}
	if err := p.Path.UnmarshalJSON(b); err != nil {
		return fmt.Errorf("path must be a string or null")
	}
	return nil
}

// MarshalJSON writes a string or null.
func (p NullableReferencePath) MarshalJSON() ([]byte, error) {
	if p.Null || !p.Set {
		return []byte("null"), nil
	}
	return p.Path.MarshalJSON()
}
