package pipelinefile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is one thing wrong with a pipeline file.
type Problem struct {
	File  string
	Line  int    // 0 when not known (a definition not read from a file)
	Stage string // "" for the file as a whole
	Msg   string
}

func (p Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Stage != "" {
		fmt.Fprintf(&b, "stage %q: ", p.Stage)
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found, in line order; one per line of Error().
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// err returns ps as an error, sorted by line, or nil when there are none.
func (ps Problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	return ps
}
