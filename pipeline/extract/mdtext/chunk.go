package mdtext

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
)

// nextCut returns where the chunk that begins at start should end: at the
// first line, target bytes or more past start, that begins a top-level
// block no earlier block can reach into, or at the end of src.
//
// Such a line follows a blank line and starts, unindented, with a letter
// (a paragraph) or an ATX heading: a blank line ends paragraphs, tables
// and HTML blocks of types 6 and 7, and an unindented paragraph or
// heading after it closes lists, block quotes and indented code. Only
// code fences and HTML blocks of types 1 to 5 (script, pre, style,
// textarea, comments, processing instructions, declarations, CDATA) run
// on across blank lines; the scan follows the ones that start at the top
// level, and render checks every cut against goldmark's own tree.
//
// Link reference definitions apply to the whole document, so a source
// that may hold one is never cut.
func nextCut(src string, start, target int) int {
	if len(src)-start <= target || strings.Contains(src[start:], "]:") {
		return len(src)
	}
	var (
		fence     string // the open fence's marker, e.g. "```"
		htmlEnd   string // what ends the open HTML block
		prevBlank bool
	)
	for pos := start; pos < len(src); {
		end := strings.IndexByte(src[pos:], '\n') + 1
		if end == 0 {
			end = len(src)
		} else {
			end += pos
		}
		line := src[pos:end]
		if pos-start >= target && prevBlank && fence == "" && htmlEnd == "" && startsTopBlock(line) {
			return pos
		}
		switch {
		case fence != "":
			if closesFence(line, fence) {
				fence = ""
			}
		case htmlEnd != "":
			if strings.Contains(strings.ToLower(line), htmlEnd) {
				htmlEnd = ""
			}
		default:
			fence = opensFence(line)
			if fence == "" {
				htmlEnd = opensRawHTML(line)
			}
		}
		prevBlank = strings.TrimSpace(line) == ""
		pos = end
	}
	return len(src)
}

// startsTopBlock: an unindented letter or ATX heading.
func startsTopBlock(line string) bool {
	r, _ := utf8.DecodeRuneInString(line)
	if unicode.IsLetter(r) {
		return true
	}
	hashes := len(line) - len(strings.TrimLeft(line, "#"))
	if hashes < 1 || hashes > 6 {
		return false
	}
	rest := line[hashes:]
	return rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n'
}

// indent strips up to three leading spaces, the most a top-level block
// may be indented by; ok is false for a line indented further.
func indent(line string) (rest string, ok bool) {
	for i := 0; i < 4; i++ {
		if i == len(line) || line[i] != ' ' {
			return line[i:], line[i:] == "" || line[i] != '\t'
		}
	}
	return "", false
}

// opensFence returns the marker of the code fence the line opens.
func opensFence(line string) string {
	rest, ok := indent(line)
	if !ok || rest == "" || (rest[0] != '`' && rest[0] != '~') {
		return ""
	}
	n := len(rest) - len(strings.TrimLeft(rest, rest[:1]))
	if n < 3 || (rest[0] == '`' && strings.Contains(rest[n:], "`")) {
		return ""
	}
	return rest[:n]
}

// closesFence reports whether the line closes a fence opened by marker.
func closesFence(line, marker string) bool {
	rest, ok := indent(line)
	if !ok || !strings.HasPrefix(rest, marker) {
		return false
	}
	return strings.TrimSpace(strings.TrimLeft(rest, marker[:1])) == ""
}

// rawHTML are the starts of the HTML blocks that only their end marker
// closes, blank lines included, with that marker. Any other "<!" counts
// as a declaration, which only overestimates where one runs.
var rawHTML = []struct{ start, end string }{
	{"<script", "</script>"}, {"<pre", "</pre>"}, {"<style", "</style>"}, {"<textarea", "</textarea>"},
	{"<!--", "-->"}, {"<?", "?>"}, {"<![cdata[", "]]>"}, {"<!", ">"},
}

// opensRawHTML returns the end marker of the raw HTML block the line
// opens and does not close.
func opensRawHTML(line string) string {
	rest, ok := indent(line)
	if !ok || !strings.HasPrefix(rest, "<") {
		return ""
	}
	rest = strings.ToLower(rest)
	for _, h := range rawHTML {
		if strings.HasPrefix(rest, h.start) {
			if strings.Contains(rest[len(h.start):], h.end) {
				return ""
			}
			return h.end
		}
	}
	return ""
}

// closedAtEnd reports whether the chunk's last block is complete: a code
// fence or a raw HTML block still open at the chunk's end means the cut
// fell inside it.
func closedAtEnd(doc ast.Node, src []byte) bool {
	n := doc.LastChild()
	for n != nil && isContainer(n) && n.LastChild() != nil {
		n = n.LastChild()
	}
	switch n := n.(type) {
	case *ast.FencedCodeBlock:
		// A closed fence has its closing line after its last content line
		// (an empty one counts as open: cutting there is merely not done).
		lines := n.Lines()
		if lines.Len() == 0 {
			return false
		}
		return len(bytes.TrimSpace(src[lines.At(lines.Len()-1).Stop:])) > 0
	case *ast.HTMLBlock:
		return n.HTMLBlockType >= ast.HTMLBlockType6 || n.HasClosure()
	}
	return true
}

func isContainer(n ast.Node) bool {
	switch n.(type) {
	case *ast.Blockquote, *ast.List, *ast.ListItem:
		return true
	}
	return false
}
