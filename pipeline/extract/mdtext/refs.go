package mdtext

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// A link reference definition applies to the whole document: a link may
// use it before it is defined, in another chunk. So when the text may
// hold one, a first chunked parse gathers the definitions with goldmark's
// own parser (which alone knows what is a definition and what is, say, a
// line of code that looks like one), and every chunk is then parsed with
// all of them at hand.

// mdBlocks is md without its inline parsers, for the gathering parse:
// definitions, and the fences and HTML blocks the chunker checks its cuts
// against, are block structure, which CommonMark settles before any
// inline content, so they come out as md finds them, faster. Of the GFM
// extensions only tables are block structure (a table is made from a
// paragraph, as a definition is).
// It is built on first use, as md is.
var mdBlocks = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithParser(parser.NewParser(
			parser.WithBlockParsers(blockParsers()...),
			parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))),
		goldmark.WithExtensions(extension.Table))
})

// refs are a document's link reference definitions, by their normalised
// label (util.ToLinkReference, the key goldmark looks them up by).
type refs map[string]parser.Reference

// maxRefBytes bounds the definitions a document may have, as the bytes of
// their labels, destinations and titles plus refOverhead each. Past it
// Stream fails with a TooLargeError rather than hold them: a real
// document has far fewer, and leaving some out would silently render
// their links differently from the document's own rendering.
//
// Before anything is parsed, the "]:" that follow every definition's
// label are counted in runs of lines without a blank line between them,
// the most one paragraph can hold: goldmark takes a run of definitions
// out of its paragraph in time quadratic in their number, so a million
// (repeated ones cost no bytes of maxRefBytes) ran for many minutes. The
// squares of the runs' counts, added up, may not pass maxRefWork: one run
// of 16,384 costs a few tenths of a second, and the thousands of a long
// link list are nothing next to it.
const (
	maxRefBytes = 1 << 20
	refOverhead = 64
	maxRefWork  = 16384 * 16384
)

// refMarks counts the "]:" in the text and rewinds it; past maxRefWork it
// fails with a TooLargeError.
func refMarks(ctx context.Context, src source) (int, error) {
	if err := src.Rewind(); err != nil {
		return 0, err
	}
	marks, run, work := 0, 0, 0
	blank := true   // the current line holds only white space so far
	last := byte(0) // the previous part's last byte
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		b, err := src.Next()
		if err == io.EOF {
			return marks, nil
		}
		if err != nil {
			return 0, err
		}
		if len(b) == 0 {
			continue
		}
		m := 0
		if last == ']' && b[0] == ':' {
			m++
		}
		last = b[len(b)-1]
		for len(b) > 0 {
			line, rest, ended := bytes.Cut(b, []byte("\n"))
			m += bytes.Count(line, []byte("]:"))
			blank = blank && len(bytes.Trim(line, " \t\r")) == 0
			if m > 0 {
				marks += m
				work += (run+m)*(run+m) - run*run
				run += m
				m = 0
				if work > maxRefWork {
					return 0, &steperr.TooLargeError{Reason: `Markdown has too many "]:" (possible link reference definitions) between blank lines`}
				}
			}
			if ended {
				if blank {
					run = 0
				}
				blank = true
			}
			b = rest
		}
	}
}

// gatherRefs parses the text chunk by chunk, as rendering will cut it, and
// returns its link reference definitions. The chunks come in document
// order, so keeping the first definition of a label across chunks, as
// goldmark keeps the first within one, keeps the first in the document,
// as CommonMark wants. The definitions are copied out of the chunks,
// which are let go.
func gatherRefs(ctx context.Context, src source, target int) (refs, error) {
	if err := src.Rewind(); err != nil {
		return nil, err
	}
	var pc parser.Context
	c := &chunker{src: src, target: target, parse: func(b []byte) ast.Node {
		pc = parser.NewContext()
		return mdBlocks().Parser().Parse(text.NewReader(b), parser.WithContext(pc))
	}}
	all := refs{}
	size := 0
	for {
		chunk, _, err := c.next(ctx)
		if err != nil {
			return nil, err
		}
		if chunk == nil {
			return all, nil
		}
		for _, ref := range pc.References() {
			key := util.ToLinkReference(ref.Label())
			if _, ok := all[key]; ok {
				continue
			}
			label, dest, title := bytes.Clone(ref.Label()), bytes.Clone(ref.Destination()), bytes.Clone(ref.Title())
			if size += len(key) + len(label) + len(dest) + len(title) + refOverhead; size > maxRefBytes {
				return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("Markdown link reference definitions take more than %d bytes", maxRefBytes)}
			}
			all[key] = parser.NewReference(label, dest, title)
		}
	}
}

// refContext is a parser context that looks link references up in the
// whole document's definitions. Those hold every definition of the
// chunk, first ones first, so the chunk's own are not consulted.
type refContext struct {
	parser.Context
	refs refs
}

func (c *refContext) Reference(label string) (parser.Reference, bool) {
	r, ok := c.refs[label]
	return r, ok
}
