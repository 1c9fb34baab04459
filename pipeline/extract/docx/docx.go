// Package docx extracts text from Word (OOXML) documents: paragraphs,
// headings and tables of the main document part, streamed through
// encoding/xml from a zip archive whose decompression is bounded by
// sniff.Archive.
//
// Units are pages when the document has explicit page breaks (a manual
// break, "page break before", or a next-page section break; Word's
// w:lastRenderedPageBreak only records where the last layout happened to
// wrap and is ignored) and no page is unreasonably long; otherwise sections
// of about limits.MaxSectionChars that start at headings and end at
// paragraph boundaries. Footnotes, comments, headers and footers are not
// extracted.
//
// Stream hands units over as they are complete, and Extract is Stream
// keeping them. Which layout applies is known only at the end of the
// document, unless a page over the slack settles it on sections earlier,
// so until then the parsed blocks are held: in memory up to a few MiB,
// then in a temp file that is removed before Stream returns. The XML is
// parsed once; memory is bounded by that buffer, one page or section and
// the largest single paragraph or table, not by the document's size.
package docx

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/sniff"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// pageSlack: pages up to this many times MaxSectionChars stay whole; a
// longer "page" means the breaks are rare and sections serve better.
const pageSlack = 4

var _ extract.UnitStreamer = Stream

// Extract returns the text of a DOCX file as pages or sections. It is
// Stream, keeping the units.
func Extract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	return extract.Collect(ctx, Stream, path, limits)
}

// Stream extracts a DOCX file unit by unit: it calls emit with each page or
// section, in order, as soon as it can tell which the document has. It
// returns the number of units emitted; an error from emit stops it and is
// returned. Sections may be emitted while the document is still being
// parsed, so a document found invalid further on fails after some units
// were emitted, where Extract returns none. Blocks it must hold until the
// layout is decided go to a temp file in os.TempDir past spillThreshold
// bytes (see collector).
func Stream(ctx context.Context, path string, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
	return stream(ctx, path, limits, spillConfig{threshold: spillThreshold}, emit)
}

// stream is Stream with the spill file's directory and threshold given.
func stream(ctx context.Context, path string, limits extract.Limits, spill spillConfig, emit func(extract.Unit) error) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	limits = limits.WithDefaults()
	a, err := sniff.OpenArchive(path, limits)
	if err != nil {
		// An encrypted DOCX is a Compound File, not a zip: let the
		// sniffer say so instead of "corrupt zip".
		if _, ierr := sniff.Inspect(ctx, path, limits); ierr != nil && steperr.Name(ierr) != steperr.Name(err) {
			return 0, ierr
		}
		return 0, err
	}
	defer func() { _ = a.Close() }()
	main, err := sniff.DOCXMainPart(ctx, a)
	if err != nil {
		return 0, err
	}
	rc, err := a.Open(ctx, main)
	if err != nil {
		return 0, err
	}
	defer func() { _ = rc.Close() }()
	c := newCollector(ctx, limits, spill, emit)
	defer c.close()
	if err := parse(rc, c); err != nil {
		return c.n, err
	}
	return c.finish()
}

// The two namespaces of WordprocessingML (transitional and strict) and the
// markup-compatibility namespace whose Fallback repeats Choice content.
const (
	nsW       = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsWStrict = "http://purl.oclc.org/ooxml/wordprocessingml/main"
	nsMC      = "http://schemas.openxmlformats.org/markup-compatibility/2006"
)

var headingStyle = regexp.MustCompile(`(?i)^(heading\s?[1-9]|title|subtitle)$`)

type para struct {
	sb          strings.Builder
	heading     bool
	breakBefore bool
	sectBreak   bool
}

type table struct {
	rows   [][]string
	row    []string
	cell   []string
	inCell bool
}

// blockSink receives a document's blocks and manual page breaks in
// document order: the streaming collector, or a test's slice.
type blockSink interface {
	block(text string, heading bool)
	pageBreak()
	// failed is the first error that stops the parse (nil: go on).
	failed() error
}

type parser struct {
	out      blockSink
	paras    []*para
	tables   []*table
	inText   int
	inPPr    int
	inSectPr int
}

func isW(n xml.Name) bool { return n.Space == nsW || n.Space == nsWStrict }

func attr(se xml.StartElement, local string) (string, bool) {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

func onOff(se xml.StartElement) bool {
	v, ok := attr(se, "val")
	return !ok || (v != "0" && v != "false" && v != "off")
}

// Bounds on the XML itself, which encoding/xml does not bound: it keeps
// every open element on a stack and a text node (or an attribute) whole.
// A real document nests a few dozen elements deep (a table in a table adds
// three) and breaks its text into runs of a paragraph or less.
const (
	maxElementDepth = 256
	maxTextRunBytes = 8 << 20
)

// parse streams word/document.xml, handing its blocks and page breaks to
// out in document order. It stops at out's first error, and fails as too
// large past maxElementDepth or maxTextRunBytes.
func parse(r io.Reader, out blockSink) error {
	d := xml.NewDecoder(&markupGapReader{r: r, max: maxTextRunBytes})
	p := &parser{out: out}
	depth := 0
	skipTo := -1 // while skipping a subtree, the depth it ends at
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return xmlError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxElementDepth {
				return &steperr.TooLargeError{Reason: fmt.Sprintf("document body nests elements more than %d deep", maxElementDepth)}
			}
			if skipTo < 0 && p.start(t) == skipSubtree {
				skipTo = depth - 1
			}
		case xml.EndElement:
			depth--
			if skipTo < 0 {
				p.end(t)
			} else if depth == skipTo {
				skipTo = -1
			}
		case xml.CharData:
			if skipTo < 0 && p.inText > 0 && len(p.paras) > 0 {
				p.top().sb.Write(t)
				p.bound()
			}
		}
		if err := out.failed(); err != nil {
			return err
		}
	}
	return out.failed()
}

// markupGapReader fails with a TooLargeError once more than max bytes
// pass without a '<', before the XML decoder has to hold them as one
// token.
type markupGapReader struct {
	r   io.Reader
	max int
	gap int // bytes since the last '<'
}

func (m *markupGapReader) Read(b []byte) (int, error) {
	n, err := m.r.Read(b)
	for rest := b[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '<')
		if i < 0 {
			i = len(rest)
		}
		if m.gap += i; m.gap > m.max {
			return 0, &steperr.TooLargeError{Reason: fmt.Sprintf("document body has more than %d bytes of text without markup", m.max)}
		}
		if i == len(rest) {
			break
		}
		m.gap, rest = 0, rest[i+1:]
	}
	return n, err
}

// xmlError classifies an error of the XML decoder. Limits and
// corrupt-entry errors come from the bounded reader and already say what
// went wrong; anything else is broken XML.
func xmlError(err error) error {
	var tooLarge *steperr.TooLargeError
	var invalid *steperr.InvalidDocumentError
	if errors.As(err, &tooLarge) || errors.As(err, &invalid) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &steperr.InvalidDocumentError{Reason: fmt.Sprintf("document body is not valid XML: %v", err)}
}

func (p *parser) top() *para { return p.paras[len(p.paras)-1] }

// maxParagraphBytes bounds the text a paragraph holds: a longer one goes
// out in blocks of about this size, each as if it were a paragraph (one in
// a table cell leaves the table), so that a paragraph of 100 MB costs no
// more than many small ones. Real paragraphs stay far below: a page holds
// about 4 KB.
const maxParagraphBytes = 64 << 10

// bound sends the text of the innermost paragraph, past
// maxParagraphBytes, out in blocks of its own, each cut at white space
// (or between characters) so that no word is split; the rest stays.
func (p *parser) bound() {
	para := p.top()
	if para.sb.Len() < maxParagraphBytes {
		return
	}
	s := para.sb.String()
	for len(s) >= maxParagraphBytes {
		cut := strings.LastIndexAny(s[:maxParagraphBytes], " \t\n")
		if cut <= 0 {
			cut = maxParagraphBytes
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
		}
		if text := clean(s[:cut]); text != "" {
			p.out.block(text, para.heading)
		}
		s = s[cut:]
	}
	para.sb = strings.Builder{}
	para.sb.WriteString(s)
}

func (p *parser) inCell() bool { return len(p.tables) > 0 && p.tables[len(p.tables)-1].inCell }

func (p *parser) write(s string) {
	if len(p.paras) > 0 {
		p.top().sb.WriteString(s)
	}
}

// startAction says what parse does with the element start has seen open:
// read on into it, or ignore it and all it holds.
type startAction bool

const (
	readOn      startAction = false
	skipSubtree startAction = true
)

func (p *parser) start(se xml.StartElement) startAction {
	if se.Name.Space == nsMC && se.Name.Local == "Fallback" {
		return skipSubtree
	}
	if !isW(se.Name) {
		return readOn
	}
	switch se.Name.Local {
	case "moveFrom": // moved text also appears, live, at its destination
		return skipSubtree
	case "p":
		p.paras = append(p.paras, &para{})
	case "pPr":
		p.inPPr++
	case "sectPr":
		p.inSectPr++
		if p.inPPr > 0 && len(p.paras) > 0 {
			p.top().sectBreak = true // the default section type starts a new page
		}
	case "type":
		if p.inSectPr > 0 && p.inPPr > 0 && len(p.paras) > 0 {
			v, _ := attr(se, "val")
			p.top().sectBreak = v == "" || v == "nextPage" || v == "oddPage" || v == "evenPage"
		}
	case "pStyle":
		if p.inPPr > 0 && p.inSectPr == 0 && len(p.paras) > 0 {
			v, _ := attr(se, "val")
			if headingStyle.MatchString(v) {
				p.top().heading = true
			}
		}
	case "outlineLvl":
		if p.inPPr > 0 && p.inSectPr == 0 && len(p.paras) > 0 {
			if v, _ := attr(se, "val"); len(v) == 1 && v[0] >= '0' && v[0] <= '8' {
				p.top().heading = true
			}
		}
	case "pageBreakBefore":
		if p.inPPr > 0 && len(p.paras) > 0 && onOff(se) {
			p.top().breakBefore = true
		}
	case "t":
		p.inText++
	case "tab":
		if p.inPPr == 0 { // inside pPr, w:tabs/w:tab are tab stops
			p.write("\t")
		}
	case "br":
		if v, _ := attr(se, "type"); v == "page" && len(p.paras) == 1 && !p.inCell() {
			p.pageBreak()
		} else {
			p.write("\n")
		}
	case "cr":
		p.write("\n")
	case "noBreakHyphen":
		p.write("-")
	case "tbl":
		p.tables = append(p.tables, &table{})
	case "tr":
		if len(p.tables) > 0 {
			p.tables[len(p.tables)-1].row = nil
		}
	case "tc":
		if len(p.tables) > 0 {
			t := p.tables[len(p.tables)-1]
			t.inCell, t.cell = true, nil
		}
	}
	return readOn
}

func (p *parser) end(ee xml.EndElement) {
	if !isW(ee.Name) {
		return
	}
	switch ee.Name.Local {
	case "t":
		if p.inText > 0 {
			p.inText--
		}
	case "pPr":
		if p.inPPr > 0 {
			p.inPPr--
		}
		if p.inPPr == 0 && len(p.paras) == 1 && !p.inCell() && p.top().breakBefore {
			p.emitBreak()
		}
	case "sectPr":
		if p.inSectPr > 0 {
			p.inSectPr--
		}
	case "p":
		if len(p.paras) == 0 {
			return
		}
		para := p.top()
		p.paras = p.paras[:len(p.paras)-1]
		text := clean(para.sb.String())
		if p.inCell() {
			if text != "" {
				t := p.tables[len(p.tables)-1]
				t.cell = append(t.cell, text)
			}
			return
		}
		if text != "" {
			p.out.block(text, para.heading)
		}
		if para.sectBreak && len(p.paras) == 0 {
			p.emitBreak()
		}
	case "tc":
		if len(p.tables) > 0 {
			t := p.tables[len(p.tables)-1]
			t.row = append(t.row, strings.Join(t.cell, " "))
			t.inCell, t.cell = false, nil
		}
	case "tr":
		if len(p.tables) > 0 {
			t := p.tables[len(p.tables)-1]
			if strings.TrimSpace(strings.Join(t.row, "")) != "" {
				t.rows = append(t.rows, t.row)
			}
			t.row = nil
		}
	case "tbl":
		if len(p.tables) == 0 {
			return
		}
		t := p.tables[len(p.tables)-1]
		p.tables = p.tables[:len(p.tables)-1]
		if p.inCell() { // a nested table flattens into its cell
			outer := p.tables[len(p.tables)-1]
			for _, row := range t.rows {
				outer.cell = append(outer.cell, strings.Join(row, " "))
			}
			return
		}
		lines := make([]string, len(t.rows))
		for i, row := range t.rows {
			lines[i] = strings.Join(row, "\t")
		}
		if text := strings.Join(lines, "\n"); text != "" {
			p.out.block(text, false)
		}
	}
}

// pageBreak ends the text before a manual page break as its own block.
func (p *parser) pageBreak() {
	para := p.top()
	if text := clean(para.sb.String()); text != "" {
		p.out.block(text, para.heading)
	}
	para.sb.Reset()
	p.emitBreak()
}

func (p *parser) emitBreak() { p.out.pageBreak() }

// clean trims a paragraph and folds whitespace inside table cells' lines.
func clean(s string) string {
	s = strings.TrimSpace(plaintext.Clean(s))
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}
