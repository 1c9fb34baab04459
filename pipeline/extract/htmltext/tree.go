package htmltext

import (
	"bytes"
	"context"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// extractTree parses the page into a tree and walks the main text.
func extractTree(ctx context.Context, src *source, limits extract.Limits) ([]extract.Unit, error) {
	b := src.decoded()
	doc, err := html.Parse(bytes.NewReader(b))
	if tooDeep(err) {
		// x/net/html stops at 512 open elements while browsers render any
		// depth; the streaming path has no such limit.
		return extractStream(ctx, &source{mem: b, size: int64(len(b))}, limits)
	}
	if err != nil { // the HTML5 parser recovers from anything but a read error and too deep nesting
		return nil, err
	}
	w := newWalker(ctx, limits, nil)
	for _, root := range mainRoots(doc) {
		w.walk(root)
		w.endBlock()
	}
	if w.err != nil {
		return nil, w.err
	}
	return w.s.Units()
}

// tooDeep reports the tree parser's refusal of deeply nested pages.
func tooDeep(err error) bool {
	return err != nil && strings.Contains(err.Error(), "open stack of elements exceeds")
}

// mainRoots picks the subtrees holding the main text: the outermost main
// landmarks, else the outermost articles, else the body.
func mainRoots(doc *html.Node) []*html.Node {
	if mains := findAll(doc, (*elem).isMain); len(mains) > 0 {
		return mains
	}
	if articles := findAll(doc, func(e *elem) bool { return e.a == atom.Article }); len(articles) > 0 {
		return articles
	}
	if body := findAll(doc, func(e *elem) bool { return e.a == atom.Body }); len(body) > 0 {
		return body[:1]
	}
	return []*html.Node{doc}
}

// findAll returns the outermost elements that match, never looking inside
// dropped elements.
func findAll(n *html.Node, match func(*elem) bool) []*html.Node {
	var out []*html.Node
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			e := elemOf(c)
			if e.dropped() {
				continue
			}
			if match(&e) {
				out = append(out, c)
				continue
			}
			visit(c)
		}
	}
	visit(n)
	return out
}

func elemOf(n *html.Node) elem {
	e := elem{a: n.DataAtom}
	for _, a := range n.Attr {
		e.attr(a.Key, a.Val)
	}
	return e
}

// walk hands the walker the subtree at n.
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
		w.text([]byte(n.Data))
	case html.ElementNode:
		e := elemOf(n)
		if w.open(&e) {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				w.walk(c)
			}
		}
		w.close()
	case html.DocumentNode:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			w.walk(c)
		}
	}
}
