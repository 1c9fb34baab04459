// Package mdtext extracts plain text from Markdown (CommonMark with the
// GitHub extensions, so tables do not leak pipes). It streams: the file
// is decoded, parsed and rendered a chunk of top-level blocks at a time,
// and each section goes out as soon as it is complete, so memory is
// bounded by a few chunks and a section rather than by the file. The
// rendering rules:
//
//   - headings, paragraphs and code blocks keep their text; every heading
//     starts a new section;
//   - each list item is one line (nested lists follow as further lines);
//   - table cells are separated by tabs, rows by newlines;
//   - links and images keep their text (alt text for images) and drop the
//     URL, except that a mailto: address the text does not show is kept in
//     parentheses, so contacts survive; autolinks keep their URL as text;
//   - inline and block HTML keep only their text.
package mdtext

import (
	"context"
	"io"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"golang.org/x/net/html"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
)

// md is the Markdown parser, built when a first document needs it: every
// docpipe command links this package, most never parse Markdown.
var md = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithParser(parser.NewParser(
			parser.WithBlockParsers(blockParsers()...),
			parser.WithInlineParsers(inlineParsers()...),
			parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))),
		goldmark.WithExtensions(extension.GFM))
})

// chunkBytes is the size past which the source is cut at the next block
// boundary that is safe to cut at, so that goldmark's tree (several times
// the size of its source) only ever holds one chunk of a large file.
const chunkBytes = 256 << 10

var _ extract.UnitStreamer = Stream

// Stream reads a Markdown file (any encoding sniff recognises) and calls
// emit with each section as soon as it is complete: the sections Extract
// returns, in order, exactly those that parsing the whole file gives. It
// holds a few chunks of the text, goldmark's tree of one, a section and
// the document's link reference definitions; only a single block longer
// than a chunk (a huge fence, say) is held whole. It reads the file up to
// four times: to choose the encoding, to count the "]:" (see refMarks;
// past maxRefWork it fails with a TooLargeError), to gather the link
// reference definitions when there may be some (see gatherRefs; past
// maxRefBytes of them it fails likewise), and to render.
// It returns the number of sections; an error from emit stops it and is
// returned.
func Stream(ctx context.Context, path string, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
	limits = limits.WithDefaults()
	t, err := plaintext.OpenText(ctx, path, limits)
	if err != nil {
		return 0, err
	}
	defer func() { _ = t.Close() }()
	return stream(ctx, t, limits, chunkBytes, emit)
}

// Extract reads a Markdown file and returns its sections. It is Stream,
// keeping the sections.
func Extract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	return extract.Collect(ctx, Stream, path, limits)
}

// ExtractString is Extract over decoded Markdown source.
func ExtractString(ctx context.Context, src string, limits extract.Limits) ([]extract.Unit, error) {
	units := []extract.Unit{}
	if _, err := stream(ctx, &stringSource{s: src, part: chunkBytes}, limits, chunkBytes, func(u extract.Unit) error {
		units = append(units, u)
		return nil
	}); err != nil {
		return nil, err
	}
	return units, nil
}

// stringSource is a source over a string, part bytes at a time.
type stringSource struct {
	s    string
	part int
	at   int
}

func (s *stringSource) Next() ([]byte, error) {
	if s.at >= len(s.s) {
		return nil, io.EOF
	}
	end := min(s.at+s.part, len(s.s))
	b := []byte(s.s[s.at:end])
	s.at = end
	return b, nil
}

func (s *stringSource) Rewind() error {
	s.at = 0
	return nil
}

// stream renders the Markdown from src, cut into chunks of about target
// bytes, section by section to emit.
func stream(ctx context.Context, src source, limits extract.Limits, target int, emit func(extract.Unit) error) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	limits = limits.WithDefaults()
	var refs refs
	if marks, err := refMarks(ctx, src); err != nil {
		return 0, err
	} else if marks > 0 {
		if refs, err = gatherRefs(ctx, src, target); err != nil {
			return 0, err
		}
	}
	if err := src.Rewind(); err != nil {
		return 0, err
	}
	// emit's error stops the parse too, not only the splitter.
	var emitErr error
	s := plaintext.NewStreamingSplitter("section", limits, func(u extract.Unit) error {
		emitErr = emit(u)
		return emitErr
	})
	r := &renderer{ctx: ctx, s: s}
	c := &chunker{src: src, target: target, parse: func(b []byte) ast.Node { return parse(b, refs) }}
	for {
		chunk, doc, err := c.next(ctx)
		if err != nil {
			return 0, err
		}
		if chunk == nil {
			break
		}
		r.src = chunk
		r.block(doc)
		if r.err != nil {
			return 0, r.err
		}
		if emitErr != nil {
			return 0, emitErr
		}
	}
	return s.Close()
}

// parse parses a chunk; link references resolve to refs, the document's
// definitions, when there are any.
func parse(src []byte, refs refs) ast.Node {
	var pc parser.Context = parser.NewContext()
	if refs != nil {
		pc = &refContext{Context: pc, refs: refs}
	}
	return md().Parser().Parse(text.NewReader(src), parser.WithContext(pc))
}

type renderer struct {
	ctx    context.Context
	src    []byte
	s      *plaintext.Splitter
	blocks int
	err    error
}

func (r *renderer) block(n ast.Node) {
	if r.err != nil {
		return
	}
	if r.blocks++; r.blocks%1024 == 0 {
		if r.err = r.ctx.Err(); r.err != nil {
			return
		}
	}
	switch n := n.(type) {
	case *ast.Heading:
		r.s.Heading(r.inline(n))
	case *ast.Paragraph, *ast.TextBlock:
		r.s.Block(r.inline(n))
	case *ast.List:
		r.s.Block(strings.Join(r.listLines(n), "\n"))
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		r.s.Block(r.lines(n))
	case *ast.HTMLBlock:
		r.s.Block(htmlText(r.lines(n)))
	case *east.Table:
		r.s.Block(r.table(n))
	case *ast.ThematicBreak:
	default: // document, blockquote
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			r.block(c)
		}
	}
}

// lines returns a block's raw lines (code, HTML).
func (r *renderer) lines(n ast.Node) string {
	var sb strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		sb.Write(seg.Value(r.src))
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		sb.Write(h.ClosureLine.Value(r.src))
	}
	return strings.TrimRight(sb.String(), "\n")
}

func (r *renderer) listLines(list *ast.List) []string {
	var out []string
	for item := list.FirstChild(); item != nil; item = item.NextSibling() {
		var parts []string
		var nested []string
		for c := item.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.List:
				nested = append(nested, r.listLines(c)...)
			case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
				parts = append(parts, r.inline(c))
			case *ast.FencedCodeBlock, *ast.CodeBlock:
				nested = append(nested, r.lines(c))
			case *east.Table:
				nested = append(nested, r.table(c))
			case *ast.HTMLBlock:
				parts = append(parts, htmlText(r.lines(c)))
			default: // blockquote inside an item
				var sub strings.Builder
				for g := c.FirstChild(); g != nil; g = g.NextSibling() {
					sub.WriteString(r.inline(g))
					sub.WriteByte(' ')
				}
				parts = append(parts, strings.TrimSpace(sub.String()))
			}
		}
		if line := strings.TrimSpace(strings.Join(parts, " ")); line != "" {
			out = append(out, line)
		}
		out = append(out, nested...)
	}
	return out
}

func (r *renderer) table(t *east.Table) string {
	var rows []string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, strings.TrimSpace(r.inline(cell)))
		}
		rows = append(rows, strings.Join(cells, "\t"))
	}
	return strings.Join(rows, "\n")
}

// inline renders the inline content of a node as plain text.
func (r *renderer) inline(n ast.Node) string {
	var sb strings.Builder
	r.inlineTo(&sb, n)
	return strings.TrimSpace(sb.String())
}

func (r *renderer) inlineTo(sb *strings.Builder, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			sb.Write(c.Value(r.src))
			switch {
			case c.HardLineBreak():
				sb.WriteByte('\n')
			case c.SoftLineBreak():
				sb.WriteByte(' ')
			}
		case *ast.String:
			sb.Write(c.Value)
		case *ast.AutoLink:
			sb.Write(c.Label(r.src))
		case *ast.RawHTML:
			// inline tags carry no text of their own
		case *ast.Link:
			start := sb.Len()
			r.inlineTo(sb, c)
			dest := string(c.Destination)
			if addr, ok := strings.CutPrefix(dest, "mailto:"); ok && addr != "" &&
				!strings.Contains(sb.String()[start:], addr) {
				sb.WriteString(" (" + addr + ")")
			}
		case *east.TaskCheckBox:
			if c.IsChecked {
				sb.WriteString("[x] ")
			} else {
				sb.WriteString("[ ] ")
			}
		default: // emphasis, code spans, strikethrough, images (alt text)
			r.inlineTo(sb, c)
		}
	}
}

// htmlText keeps the text of an HTML fragment embedded in Markdown.
func htmlText(fragment string) string {
	z := html.NewTokenizer(strings.NewReader(fragment))
	var sb strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.Join(strings.Fields(sb.String()), " ")
		case html.TextToken:
			if skip == 0 {
				sb.Write(z.Text())
				sb.WriteByte(' ')
			}
		case html.StartTagToken:
			if name, _ := z.TagName(); string(name) == "script" || string(name) == "style" {
				skip++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); (string(name) == "script" || string(name) == "style") && skip > 0 {
				skip--
			}
		}
	}
}
