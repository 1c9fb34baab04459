package mdtext

import (
	"bytes"
	"context"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
)

// source is decoded Markdown, read a part at a time (a part may be
// empty; io.EOF follows the last), that can be read again from its start.
// plaintext.TextReader is one.
type source interface {
	Next() ([]byte, error)
	Rewind() error
}

// chunker cuts the text from a source into chunks that goldmark can parse
// one at a time with the result of parsing the whole: each ends where a
// top-level block starts that no earlier block can reach into (see
// cutter), at least target bytes past its start unless the text ends
// first. It holds one chunk and the part read past it.
type chunker struct {
	src    source
	target int
	parse  func([]byte) ast.Node
	buf    []byte // buf[:done] is the chunk last returned, the rest follows it
	done   int
	eof    bool
	cut    cutter
}

// next returns the next chunk and its tree, or a nil chunk at the end of
// the text. The chunk is valid until the next call.
//
// A cut that goldmark's tree shows to fall inside a code fence or a raw
// HTML block (the line scan can be fooled, by a fence inside an HTML
// block for one) is moved to the next place the scan allows at least
// twice as far from the chunk's start, and checked again: the chunk grows
// past such a block, so memory is bounded by a few chunks except for one
// pathological block, and the doubling keeps the parses of a growing
// chunk linear in its final size.
func (c *chunker) next(ctx context.Context) ([]byte, ast.Node, error) {
	c.buf = c.buf[:copy(c.buf, c.buf[c.done:])]
	c.done = 0
	if cap(c.buf) > 4*c.target && len(c.buf) < c.target {
		c.buf = append([]byte(nil), c.buf...) // a pathological block grew it; let it go
	}
	c.cut = cutter{min: c.target}
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		end, ok := c.cut.scan(c.buf, c.eof)
		if !ok && !c.eof {
			if err := c.fill(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if !ok {
			end = len(c.buf)
		}
		if end == 0 {
			return nil, nil, nil
		}
		chunk := c.buf[:end]
		doc := c.parse(chunk)
		if end == len(c.buf) && c.eof || closedAtEnd(doc, chunk) {
			c.done = end
			return chunk, doc, nil
		}
		c.cut.resync(doc, chunk)
		c.cut.min = 2 * end
	}
}

// fill reads the source's next part into buf.
func (c *chunker) fill() error {
	b, err := c.src.Next()
	if err == io.EOF {
		c.eof = true
		return nil
	}
	if err != nil {
		return err
	}
	c.buf = append(c.buf, b...)
	return nil
}

// cutter finds where a chunk may end. A cut goes at the first line, min
// bytes or more past the chunk's start, that begins a top-level block no
// earlier block can reach into.
//
// Such a line follows a blank line and starts, unindented, with a letter
// (a paragraph) or an ATX heading: a blank line ends paragraphs, tables
// and HTML blocks of types 6 and 7, and an unindented paragraph or
// heading after it closes lists, block quotes and indented code. Only
// code fences and HTML blocks of types 1 to 5 (script, pre, style,
// textarea, comments, processing instructions, declarations, CDATA) run
// on across blank lines; the scan follows the ones that start at the top
// level, and chunker checks every cut against goldmark's own tree.
//
// Link reference definitions apply to the whole document; they do not
// stop a cut, because Stream gathers them all before it renders.
//
// The scan goes on where it stopped when the text it has seen ends
// inside a line, so each line is scanned once however it arrives.
type cutter struct {
	min       int
	fence     string // the open fence's marker, e.g. "```"
	htmlEnd   string // what ends the open HTML block
	prevBlank bool
	pos       int // where the next line to scan starts
	seen      int // bytes from pos known to hold no newline
}

// scan returns where the chunk in buf (from its start) may end, or false
// when buf has no such place yet. eof says buf holds the rest of the text,
// so that its last line is complete without a newline.
func (c *cutter) scan(buf []byte, eof bool) (int, bool) {
	for c.pos < len(buf) {
		end := len(buf)
		if nl := bytes.IndexByte(buf[c.pos+c.seen:], '\n'); nl >= 0 {
			end = c.pos + c.seen + nl + 1
		} else if !eof {
			c.seen = len(buf) - c.pos
			return 0, false
		}
		c.seen = 0
		line := buf[c.pos:end]
		if c.pos >= c.min && c.prevBlank && c.fence == "" && c.htmlEnd == "" && startsTopBlock(line) {
			return c.pos, true
		}
		c.line(line)
		c.pos = end
	}
	return 0, false
}

// line follows the fences and raw HTML blocks a line opens and closes. A
// line is made a string only where it may matter: inside such a block, or
// when it starts with one's first character.
func (c *cutter) line(b []byte) {
	switch {
	case c.fence != "":
		if closesFence(string(b), c.fence) {
			c.fence = ""
		}
	case c.htmlEnd != "":
		if strings.Contains(strings.ToLower(string(b)), c.htmlEnd) {
			c.htmlEnd = ""
		}
	default:
		rest := bytes.TrimLeft(b, " ")
		if len(rest) == 0 || (rest[0] != '`' && rest[0] != '~' && rest[0] != '<') {
			break
		}
		line := string(b)
		c.fence = strings.Clone(opensFence(line))
		if c.fence == "" {
			c.htmlEnd = opensRawHTML(line)
		}
	}
	c.prevBlank = len(bytes.TrimSpace(b)) == 0
}

// startsTopBlock: an unindented letter or ATX heading.
func startsTopBlock(line []byte) bool {
	r, _ := utf8.DecodeRune(line)
	if unicode.IsLetter(r) {
		return true
	}
	hashes := len(line) - len(bytes.TrimLeft(line, "#"))
	if hashes < 1 || hashes > 6 {
		return false
	}
	rest := line[hashes:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n'
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
	switch n := lastBlock(doc).(type) {
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

// lastBlock is the innermost last block of the tree.
func lastBlock(doc ast.Node) ast.Node {
	n := doc.LastChild()
	for n != nil && isContainer(n) && n.LastChild() != nil {
		n = n.LastChild()
	}
	return n
}

// resync makes the scan follow the top-level fence or raw HTML block that
// goldmark's tree of the chunk shows open at its end, where the scan saw
// none: from the block's opening line, as if the scan had read it so.
// Else the scan, out of step, would take the block's end for the start
// of another and could cut nowhere until the end of the text.
func (c *cutter) resync(doc ast.Node, src []byte) {
	switch n := lastBlock(doc).(type) {
	case *ast.FencedCodeBlock:
		if n.Parent() != doc || n.Lines().Len() == 0 {
			return // nested, or no line to find the opening one by
		}
		// The opening line ends where the first content line starts.
		end := bytes.LastIndexByte(src[:n.Lines().At(0).Start], '\n')
		if end < 0 {
			return
		}
		start := bytes.LastIndexByte(src[:end], '\n') + 1
		if fence := opensFence(string(src[start : end+1])); fence != "" {
			c.fence, c.htmlEnd = strings.Clone(fence), ""
		}
	case *ast.HTMLBlock:
		if n.Parent() != doc || n.Lines().Len() == 0 {
			return
		}
		first := n.Lines().At(0)
		if end := opensRawHTML(string(first.Value(src))); end != "" {
			c.fence, c.htmlEnd = "", end
		}
	}
}
