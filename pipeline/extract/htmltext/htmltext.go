// Package htmltext extracts the main text of an HTML page: the content of
// <main> or role=main (or of its <article>s, or of <body>), without
// scripts, styles, navigation, forms, asides, and headers or footers
// outside the main content. Block elements become line breaks, table cells
// are separated by tabs, and every heading starts a new section.
//
// Pages under streamFrom bytes are parsed into a tree by x/net/html. Larger
// ones are read twice with its tokenizer by a builder that keeps only a
// stack of open elements and models the implied end tags that decide where
// text lands (stream.go), so memory follows the text, not the markup. Both
// paths feed the same walker the same element starts, ends and text, and
// the walker holds the one set of rules. The streaming path differs from
// the tree only where the parser restructures the tree (formatting
// elements closed across blocks, content moved out of tables); stream.go
// lists the cases.
package htmltext

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html/atom"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/sniff"
)

// streamFrom is the page size from which the streaming path is taken. A
// parse tree costs about 12 times the page, so the tree path peaks near
// 50 MB here, while the streaming path stays under twice the text. The
// builder repairs markup as the tree parser does save where the parser
// restructures (see stream.go); below this size the parser itself
// decides. Nearly every web page is far smaller; pages this large are
// exports and reports.
const streamFrom = 4 << 20

// Extract reads an HTML file and returns its sections.
func Extract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	return extract.Collect(ctx, Stream, path, limits)
}

// ExtractBytes is Extract over a document in memory.
func ExtractBytes(ctx context.Context, b []byte, limits extract.Limits) ([]extract.Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src := &source{mem: b, size: int64(len(b))}
	if err := src.detect(); err != nil {
		return nil, err
	}
	if len(b) >= streamFrom {
		return extractStream(ctx, src, limits)
	}
	return extractTree(ctx, src, limits)
}

// extractStream reads a large page with the streaming builder.
func extractStream(ctx context.Context, src *source, limits extract.Limits) ([]extract.Unit, error) {
	w := newWalker(ctx, limits, nil)
	if err := walkStream(ctx, src, w); err != nil {
		return nil, err
	}
	return w.s.Units()
}

// walkStream feeds w the page in src through the streaming builder: a
// first pass finds where the main text is, the second walks it.
func walkStream(ctx context.Context, src *source, w *walker) error {
	r, err := src.reader()
	if err != nil {
		return err
	}
	scan := newBuilder(ctx, r, nil)
	if err := scan.run(); err != nil {
		return err
	}
	if r, err = src.reader(); err != nil {
		return err
	}
	b := newBuilder(ctx, r, w)
	b.roots = scan.found
	if err := b.run(); err != nil {
		return err
	}
	return w.err
}

// Stream is Extract handing each section to emit as soon as it is
// complete, for format_parser to store while the rest is read. A page of
// streamFrom bytes or more goes through the streaming builder and holds
// one section at a time; a smaller one is extracted whole (its parse tree
// is bounded by streamFrom's) and then handed over. An error from emit
// stops it and is returned.
func Stream(ctx context.Context, path string, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
	limits = limits.WithDefaults()
	f, size, err := sniff.OpenFile(path, limits)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	if size < streamFrom {
		b := make([]byte, size)
		if _, err := io.ReadFull(f, b); err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		units, err := ExtractBytes(ctx, b, limits)
		if err != nil {
			return 0, err
		}
		for _, u := range units {
			if err := emit(u); err != nil {
				return 0, err
			}
		}
		return len(units), nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	src := &source{file: f, size: size}
	if err := src.detect(); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	w := newWalker(ctx, limits, emit)
	if err := walkStream(ctx, src, w); err != nil {
		return 0, err
	}
	return w.s.Close()
}

// elem is what the rules need to know of an element: its type and the few
// attributes they look at. Both paths build it, from a tree node or from a
// start tag.
type elem struct {
	a      atom.Atom
	hidden bool // hidden, aria-hidden="true", or a role that is never main text
	role   role // the landmark roles the rules look at
	mailto string
}

type role uint8

const (
	roleNone role = iota
	roleOther
	roleMain
	roleBanner
	roleContentinfo
)

// attr records what the rules need of one attribute.
func (e *elem) attr(key, val string) {
	switch key {
	case "hidden":
		e.hidden = true
	case "aria-hidden":
		if val == "true" {
			e.hidden = true
		}
	case "role":
		if e.role != roleNone {
			return
		}
		e.role = roleOther
		switch val {
		case "navigation", "search", "complementary":
			e.hidden = true
		case "main":
			e.role = roleMain
		case "banner":
			e.role = roleBanner
		case "contentinfo":
			e.role = roleContentinfo
		}
	case "href":
		if e.a != atom.A || !strings.HasPrefix(strings.ToLower(val), "mailto:") {
			return
		}
		addr := val[len("mailto:"):]
		if i := strings.IndexByte(addr, '?'); i >= 0 {
			addr = addr[:i]
		}
		e.mailto = addr
	}
}

// dropped: elements whose content is never main text.
func (e *elem) dropped() bool {
	switch e.a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Nav, atom.Aside,
		atom.Form, atom.Button, atom.Select, atom.Textarea, atom.Input, atom.Iframe,
		atom.Object, atom.Embed, atom.Svg, atom.Math, atom.Canvas, atom.Head, atom.Title, atom.Dialog:
		return true
	}
	return e.hidden
}

// isMain: the landmark whose content is the main text.
func (e *elem) isMain() bool { return e.a == atom.Main || e.role == roleMain }

// chrome: site header and footer, dropped outside the main content.
func (e *elem) chrome() bool {
	return e.a == atom.Header || e.a == atom.Footer || e.role == roleBanner || e.role == roleContentinfo
}

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

// blockish elements end the current block.
func blockish(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Blockquote,
		atom.Ul, atom.Ol, atom.Dl, atom.Table, atom.Figure, atom.Address, atom.Details,
		atom.Fieldset, atom.Center, atom.Header, atom.Footer, atom.Hr, atom.Pre, atom.Body, atom.Html:
		return true
	}
	return false
}

// lineish elements end the current line but stay in the block.
func lineish(a atom.Atom) bool {
	switch a {
	case atom.Li, atom.Dt, atom.Dd, atom.Tr, atom.Caption, atom.Figcaption, atom.Summary, atom.Legend:
		return true
	}
	return false
}

// walker turns element starts and ends and text, in document order, into
// blocks and headings. open and close must nest; the tree path calls them
// around each element's children, the streaming path as its builder opens
// and closes elements.
type walker struct {
	ctx     context.Context
	limits  extract.Limits
	s       *plaintext.Splitter
	body    flow
	heading flow  // collects a heading's text until it ends
	cur     *flow // body, or heading inside one
	frames  []frame
	mailtos []string // addresses of the open mailto links, innermost last
	skip    int      // depth inside a dropped element
	visited int
	err     error
}

// flow is the text being assembled: the current line and the finished
// lines of the current block.
type flow struct {
	line   []byte
	block  []byte // finished lines, separated by sep
	lines  int
	sep    byte
	space  bool
	pre    int
	table  int
	list   int
	inMain int
}

// frame says what an element's end does.
type frame uint8

const (
	endNothing   frame = iota
	endMain            // main, article: end the block, leave the main content
	endHeading         // emit the heading
	endTable           // end the block after the outermost table, the line after a nested one
	endPre             // end the block and preformatting
	endLine            // end the line
	endItem            // end the line and the list item
	endCellBlock       // a block inside a table cell: a space
	endListBlock       // a block inside a list item: end the line
	endBlock           // end the block
	endMailto          // add the address of a mailto link
)

// newWalker returns a walker whose sections go to emit as they complete,
// or are kept for Units when emit is nil.
func newWalker(ctx context.Context, limits extract.Limits, emit func(extract.Unit) error) *walker {
	s := plaintext.NewSplitter("section", limits)
	if emit != nil {
		s = plaintext.NewStreamingSplitter("section", limits, emit)
	}
	w := &walker{ctx: ctx, limits: limits, s: s}
	w.body.sep = '\n'
	w.heading.sep = ' '
	w.cur = &w.body
	return w
}

// open starts an element and reports whether its content matters.
func (w *walker) open(e *elem) bool {
	if w.skip > 0 {
		w.skip++
		return false
	}
	f := w.cur
	if e.dropped() || (e.chrome() && f.inMain == 0) {
		w.skip = 1
		return false
	}
	a := e.a
	k := endNothing
	switch {
	case a == atom.Main || a == atom.Article || e.role == roleMain:
		f.inMain++
		w.endBlock()
		k = endMain
	case isHeading(a) && f.table == 0 && w.cur == &w.body:
		w.endBlock()
		w.heading.inMain = f.inMain
		w.cur = &w.heading
		k = endHeading
	case a == atom.Br:
		f.newline()
	case a == atom.Td || a == atom.Th:
		if len(f.line) > 0 {
			f.line = append(f.line, '\t')
		}
		f.space = false
	case a == atom.Table:
		if f.table == 0 {
			w.endBlock()
		} else {
			f.newline()
		}
		f.table++
		k = endTable
	case a == atom.Pre:
		w.endBlock()
		f.pre++
		k = endPre
	case lineish(a):
		f.newline()
		k = endLine
		if a == atom.Li {
			f.list++
			k = endItem
		}
	case blockish(a) || isHeading(a): // a heading inside a heading is a line of it
		switch {
		case f.table > 0: // blocks inside a cell stay on the row's line
			f.space = true
			k = endCellBlock
		case f.list > 0: // nested lists and paragraphs inside an item are lines
			f.newline()
			k = endListBlock
		default:
			w.endBlock()
			k = endBlock
		}
	case a == atom.A && e.mailto != "":
		w.mailtos = append(w.mailtos, e.mailto)
		k = endMailto
	}
	w.frames = append(w.frames, k)
	return true
}

// close ends the innermost open element.
func (w *walker) close() {
	if w.skip > 0 {
		w.skip--
		return
	}
	k := w.frames[len(w.frames)-1]
	w.frames = w.frames[:len(w.frames)-1]
	f := w.cur
	switch k {
	case endMain:
		w.endBlock()
		f.inMain--
	case endHeading:
		h := &w.heading
		h.newline()
		w.s.Heading(string(h.block))
		h.block, h.lines, h.table, h.list, h.pre = h.block[:0], 0, 0, 0, 0
		w.cur = &w.body
	case endTable:
		f.table--
		if f.table == 0 {
			w.endBlock()
		} else {
			f.newline()
		}
	case endPre:
		f.pre--
		w.endBlock()
	case endLine:
		f.newline()
	case endItem:
		f.list--
		f.newline()
	case endCellBlock:
		f.space = true
	case endListBlock:
		f.newline()
	case endBlock:
		w.endBlock()
	case endMailto:
		addr := w.mailtos[len(w.mailtos)-1]
		w.mailtos = w.mailtos[:len(w.mailtos)-1]
		if !bytes.Contains(f.line, []byte(addr)) {
			f.text([]byte(" (" + addr + ")"))
		}
	}
}

func (w *walker) text(s []byte) {
	if w.skip == 0 {
		w.cur.text(s)
	}
}

// endBlock ends the current block: a heading's lines stay together until
// the heading ends.
func (w *walker) endBlock() {
	f := w.cur
	f.newline()
	if f == &w.body && f.lines > 0 {
		w.s.Block(string(f.block))
		f.block, f.lines = f.block[:0], 0
	}
}

func (f *flow) text(s []byte) {
	if f.pre > 0 {
		for i := 0; ; i++ {
			part, rest, more := bytes.Cut(s, []byte{'\n'})
			if i > 0 {
				f.newline()
			}
			f.line = append(f.line, bytes.TrimRight(part, "\r")...)
			if !more {
				return
			}
			s = rest
		}
	}
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(s[i:])
		}
		i += size
		if unicode.IsSpace(r) {
			f.space = true
			continue
		}
		if f.space && len(f.line) > 0 && f.line[len(f.line)-1] != '\t' {
			f.line = append(f.line, ' ')
		}
		f.space = false
		f.line = utf8.AppendRune(f.line, r)
	}
}

// newline moves the current line, cleaned, to the block unless it is blank.
func (f *flow) newline() {
	l := f.line
	if !plain(l) {
		l = []byte(plaintext.Clean(string(l)))
	}
	l = bytes.TrimRight(l, " \t")
	if len(bytes.TrimSpace(l)) > 0 {
		if f.lines > 0 {
			f.block = append(f.block, f.sep)
		}
		f.block = append(f.block, l...)
		f.lines++
	}
	f.line = f.line[:0]
	f.space = false
}

// plain reports printable ASCII and tabs, which plaintext.Clean leaves as
// they are (checked to spare a copy per line).
func plain(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\t') || c >= 0x7F {
			return false
		}
	}
	return true
}
