package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
)

// textTable is every human table docpipe prints: aligned columns whose
// cells have their control characters escaped (printable), so that a file
// named with a newline or a tab cannot break a row or shift a column, and
// one with an escape sequence cannot repaint the terminal. JSON output
// carries names as they are.
type textTable struct{ tw *tabwriter.Writer }

// newTextTable starts a table on w with a header row, if any.
func newTextTable(w io.Writer, header ...string) *textTable {
	t := &textTable{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(header) > 0 {
		fmt.Fprintln(t.tw, strings.Join(header, "\t"))
	}
	return t
}

// row adds one row; each cell is printed as by fmt.Sprint, then escaped.
func (t *textTable) row(cells ...any) {
	for i, c := range cells {
		if i > 0 {
			io.WriteString(t.tw, "\t")
		}
		io.WriteString(t.tw, printable(fmt.Sprint(c)))
	}
	io.WriteString(t.tw, "\n")
}

// flush aligns and writes the rows.
func (t *textTable) flush() error { return t.tw.Flush() }

// printable escapes the control characters of s the way Go writes them in
// a quoted string (\n, \t, \x1b, \u2028, ...) and leaves everything else,
// other scripts included, as it is.
func printable(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !isControl(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// isControl is a character that moves the cursor or changes how what
// follows is shown: C0 and C1 controls, line and paragraph separators,
// and the bidirectional formatting characters.
func isControl(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}
