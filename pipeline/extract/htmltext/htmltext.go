// Package htmltext extracts the main text of an HTML page: the content of
// <main> (or of its <article>s, or of <body>), without scripts, styles,
// navigation, forms, asides, and headers or footers outside the main
// content. Block elements become line breaks, table cells are separated by
// tabs, and every heading starts a new section.
package htmltext

import (
	"bytes"
	"context"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/sniff"
)

// Extract reads an HTML file and returns its sections.
func Extract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	limits = limits.WithDefaults()
	b, err := sniff.ReadFile(path, limits)
	if err != nil {
		return nil, err
	}
	return ExtractBytes(ctx, b, limits)
}

// ExtractBytes is Extract over a document in memory.
func ExtractBytes(ctx context.Context, b []byte, limits extract.Limits) ([]extract.Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b = decode(b)
	w := &walker{ctx: ctx, s: plaintext.NewSplitter("section", limits)}
	doc, err := html.Parse(bytes.NewReader(b))
	if tooDeep(err) {
		if err := w.streamText(b); err != nil {
			return nil, err
		}
		return w.s.Units()
	}
	if err != nil { // the HTML5 parser recovers from anything but a read error and too deep nesting
		return nil, err
	}
	for _, root := range mainRoots(doc) {
		w.walk(root)
		w.endBlock()
	}
	if w.err != nil {
		return nil, w.err
	}
	return w.s.Units()
}

// decode converts the document to UTF-8 as a browser would: byte-order
// mark, then <meta charset>, then UTF-8 if it is valid, else Windows-1252;
// BOM-less UTF-16, which browsers do not guess, is recognised by its NULs.
func decode(b []byte) []byte {
	enc, name, certain := charset.DetermineEncoding(b, "")
	if !certain {
		if te, ok := sniff.DetectEncoding(b); ok && te.BOMLen == 0 &&
			(te.Name == sniff.EncodingUTF16LE || te.Name == sniff.EncodingUTF16BE) {
			enc, _ = charset.Lookup(te.Name)
			name = te.Name
		}
	}
	if name == "utf-8" || (name == "windows-1252" && ascii(b)) {
		return b // decoding would copy the page unchanged
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return b
	}
	return out
}

// ascii reports whether b is 7-bit, which Windows-1252 leaves as it is.
func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// mainRoots picks the subtrees holding the main text.
func mainRoots(doc *html.Node) []*html.Node {
	if mains := findAll(doc, atom.Main, false); len(mains) > 0 {
		return mains
	}
	if articles := findAll(doc, atom.Article, true); len(articles) > 0 {
		return articles
	}
	if body := findAll(doc, atom.Body, true); len(body) > 0 {
		return body[:1]
	}
	return []*html.Node{doc}
}

// findAll returns the elements of type a, outermost only when outer is
// set, never looking inside dropped elements.
func findAll(n *html.Node, a atom.Atom, outer bool) []*html.Node {
	var out []*html.Node
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if dropped(c) {
				continue
			}
			if c.DataAtom == a {
				out = append(out, c)
				if outer {
					continue
				}
			}
			visit(c)
		}
	}
	visit(n)
	return out
}

// dropped: elements whose content is never main text.
func dropped(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Nav, atom.Aside,
		atom.Form, atom.Button, atom.Select, atom.Textarea, atom.Input, atom.Iframe,
		atom.Object, atom.Embed, atom.Svg, atom.Math, atom.Canvas, atom.Head, atom.Title, atom.Dialog:
		return true
	}
	for _, a := range n.Attr {
		switch {
		case a.Key == "hidden":
			return true
		case a.Key == "aria-hidden" && a.Val == "true":
			return true
		case a.Key == "role" && (a.Val == "navigation" || a.Val == "search" || a.Val == "complementary"):
			return true
		}
	}
	return false
}

func role(n *html.Node) string {
	for _, a := range n.Attr {
		if a.Key == "role" {
			return a.Val
		}
	}
	return ""
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

type walker struct {
	ctx     context.Context
	s       *plaintext.Splitter
	line    strings.Builder
	lines   []string
	space   bool
	pre     int
	table   int
	list    int
	inMain  int
	visited int
	err     error
}

func (w *walker) walk(n *html.Node) {
	if w.err != nil {
		return
	}
	if w.visited++; w.visited%4096 == 0 {
		if w.err = w.ctx.Err(); w.err != nil {
			return
		}
	}
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
	case html.DocumentNode:
		w.children(n)
		return
	default:
		return
	}
	if dropped(n) {
		return
	}
	a := n.DataAtom
	r := role(n)
	if (a == atom.Header || a == atom.Footer || r == "banner" || r == "contentinfo") && w.inMain == 0 {
		return
	}
	switch {
	case a == atom.Main || a == atom.Article:
		w.inMain++
		w.endBlock()
		w.children(n)
		w.endBlock()
		w.inMain--
	case isHeading(a) && w.table == 0:
		w.endBlock()
		h := &walker{ctx: w.ctx, inMain: w.inMain}
		h.children(n)
		h.newline()
		w.s.Heading(strings.Join(h.lines, " "))
	case a == atom.Br:
		w.newline()
	case a == atom.Td || a == atom.Th:
		if w.line.Len() > 0 {
			w.line.WriteByte('\t')
		}
		w.space = false
		w.children(n)
	case a == atom.Table:
		if w.table == 0 {
			w.endBlock()
		} else {
			w.newline()
		}
		w.table++
		w.children(n)
		w.table--
		if w.table == 0 {
			w.endBlock()
		}
	case a == atom.Pre:
		w.endBlock()
		w.pre++
		w.children(n)
		w.pre--
		w.endBlock()
	case lineish(a):
		w.newline()
		if a == atom.Li {
			w.list++
		}
		w.children(n)
		if a == atom.Li {
			w.list--
		}
		w.newline()
	case blockish(a) || isHeading(a):
		if w.table > 0 { // blocks inside a cell stay on the row's line
			w.space = true
			w.children(n)
			w.space = true
			return
		}
		if w.list > 0 { // nested lists and paragraphs inside an item are lines
			w.newline()
			w.children(n)
			w.newline()
			return
		}
		w.endBlock()
		w.children(n)
		w.endBlock()
	case a == atom.A:
		w.children(n)
		w.mailto(n)
	default:
		w.children(n)
	}
}

func (w *walker) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
}

// mailto keeps the address of a mail link whose text does not show it:
// "write to us" alone would lose what later analysis looks for.
func (w *walker) mailto(n *html.Node) {
	for _, a := range n.Attr {
		if a.Key != "href" || !strings.HasPrefix(strings.ToLower(a.Val), "mailto:") {
			continue
		}
		addr := a.Val[len("mailto:"):]
		if i := strings.IndexByte(addr, '?'); i >= 0 {
			addr = addr[:i]
		}
		if addr != "" && !strings.Contains(w.line.String(), addr) {
			w.text(" (" + addr + ")")
		}
	}
}

func (w *walker) text(s string) {
	if w.pre > 0 {
		for i, part := range strings.Split(s, "\n") {
			if i > 0 {
				w.newline()
			}
			w.line.WriteString(strings.TrimRight(part, "\r"))
		}
		return
	}
	for _, r := range s {
		if unicode.IsSpace(r) {
			w.space = true
			continue
		}
		if w.space && w.line.Len() > 0 {
			last := w.line.String()[w.line.Len()-1]
			if last != '\t' {
				w.line.WriteByte(' ')
			}
		}
		w.space = false
		w.line.WriteRune(r)
	}
}

func (w *walker) newline() {
	if l := strings.TrimRight(plaintext.Clean(w.line.String()), " \t"); strings.TrimSpace(l) != "" {
		w.lines = append(w.lines, l)
	}
	w.line.Reset()
	w.space = false
}

func (w *walker) endBlock() {
	w.newline()
	if len(w.lines) > 0 && w.s != nil {
		w.s.Block(strings.Join(w.lines, "\n"))
		w.lines = w.lines[:0]
	}
}
