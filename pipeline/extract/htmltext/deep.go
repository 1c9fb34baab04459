package htmltext

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// streamText extracts text with the tokenizer, which has no nesting limit,
// for pages the tree parser refuses (x/net/html stops at 512 open
// elements while browsers render any depth). It applies the walker's
// block, line, heading, cell and dropped-element rules to tags as they
// stream by; it keeps no tree, so memory stays proportional to the text.
// Unlike the tree walk it does not pick <main> out of the page.
func (w *walker) streamText(b []byte) error {
	z := html.NewTokenizer(bytes.NewReader(b))
	var (
		skip    atom.Atom // the dropped element being skipped, and
		skipped int       // how deep inside nested copies of it we are
		heading *walker   // collects a heading's text until it ends
	)
	for {
		if w.visited++; w.visited%4096 == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		tt := z.Next()
		if tt == html.ErrorToken {
			if errors.Is(z.Err(), io.EOF) {
				w.endBlock()
				return nil
			}
			return z.Err()
		}
		name, hasAttr := z.TagName()
		a := atom.Lookup(name)
		if skipped > 0 {
			switch {
			case tt == html.StartTagToken && a == skip:
				skipped++
			case tt == html.EndTagToken && a == skip:
				skipped--
			}
			continue
		}
		out := w
		if heading != nil {
			out = heading
		}
		switch tt {
		case html.TextToken:
			out.text(string(z.Text()))
		case html.StartTagToken, html.SelfClosingTagToken:
			n := &html.Node{Type: html.ElementNode, DataAtom: a, Data: string(name)}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				n.Attr = append(n.Attr, html.Attribute{Key: string(k), Val: string(v)})
			}
			if dropped(n) {
				if tt == html.StartTagToken && !void(a) {
					skip, skipped = a, 1
				}
				continue
			}
			switch {
			case isHeading(a) && heading == nil:
				w.endBlock()
				heading = &walker{ctx: w.ctx}
			case a == atom.Br:
				out.newline()
			case a == atom.Td || a == atom.Th:
				if out.line.Len() > 0 {
					out.line.WriteByte('\t')
				}
				out.space = false
			case a == atom.Pre:
				w.endBlock()
				w.pre++
			case lineish(a) || a == atom.Tr:
				out.newline()
			case blockish(a):
				if heading != nil {
					out.space = true
				} else {
					w.endBlock()
				}
			}
		case html.EndTagToken:
			switch {
			case isHeading(a) && heading != nil:
				heading.newline()
				w.s.Heading(strings.Join(heading.lines, " "))
				heading = nil
			case a == atom.Pre && w.pre > 0:
				w.pre--
				w.endBlock()
			case lineish(a):
				out.newline()
			case blockish(a):
				if heading != nil {
					out.space = true
				} else {
					w.endBlock()
				}
			}
		}
	}
}

// void elements have no end tag.
func void(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

// tooDeep reports the tree parser's refusal of deeply nested pages.
func tooDeep(err error) bool {
	return err != nil && strings.Contains(err.Error(), "open stack of elements exceeds")
}
