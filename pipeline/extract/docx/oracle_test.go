package docx

// The slice-based parse and layout that Extract used before Stream: the
// whole document's blocks in memory, then the layout decision. Tests and
// benchmarks compare Stream against it.

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/sniff"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// oracleExtract is Extract as it was: parse into a slice, then lay out.
func oracleExtract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	limits = limits.WithDefaults()
	a, err := sniff.OpenArchive(path, limits)
	if err != nil {
		if _, ierr := sniff.Inspect(ctx, path, limits); ierr != nil && steperr.Name(ierr) != steperr.Name(err) {
			return nil, ierr
		}
		return nil, err
	}
	defer func() { _ = a.Close() }()
	main, err := sniff.DOCXMainPart(ctx, a)
	if err != nil {
		return nil, err
	}
	rc, err := a.Open(ctx, main)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	blocks, hasBreaks, err := oracleParse(rc)
	if err != nil {
		return nil, err
	}
	return oracleLayout(blocks, hasBreaks, limits)
}

type oracleBlock struct {
	text      string
	heading   bool
	pageBreak bool
}

type oracleParser struct {
	blocks    []oracleBlock
	paras     []*para
	tables    []*table
	inText    int
	inPPr     int
	inSectPr  int
	hasBreaks bool
}

// oracleParse streams word/document.xml into blocks.
func oracleParse(r io.Reader) ([]oracleBlock, bool, error) {
	d := xml.NewDecoder(r)
	p := &oracleParser{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			// Limits and corrupt-entry errors come from the bounded reader
			// and already say what went wrong.
			var tooLarge *steperr.TooLargeError
			var invalid *steperr.InvalidDocumentError
			if errors.As(err, &tooLarge) || errors.As(err, &invalid) ||
				errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, false, err
			}
			return nil, false, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("document body is not valid XML: %v", err)}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := p.start(d, t); err != nil {
				return nil, false, xmlError(err) // as Stream classifies it
			}
		case xml.EndElement:
			p.end(t)
		case xml.CharData:
			if p.inText > 0 && len(p.paras) > 0 {
				p.top().sb.Write(t)
			}
		}
	}
	return p.blocks, p.hasBreaks, nil
}

func (p *oracleParser) top() *para { return p.paras[len(p.paras)-1] }

func (p *oracleParser) inCell() bool { return len(p.tables) > 0 && p.tables[len(p.tables)-1].inCell }

func (p *oracleParser) write(s string) {
	if len(p.paras) > 0 {
		p.top().sb.WriteString(s)
	}
}

func (p *oracleParser) start(d *xml.Decoder, se xml.StartElement) error {
	if se.Name.Space == nsMC && se.Name.Local == "Fallback" {
		return d.Skip()
	}
	if !isW(se.Name) {
		return nil
	}
	switch se.Name.Local {
	case "moveFrom": // moved text also appears, live, at its destination
		return d.Skip()
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
	return nil
}

func (p *oracleParser) end(ee xml.EndElement) {
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
			p.blocks = append(p.blocks, oracleBlock{text: text, heading: para.heading})
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
			p.blocks = append(p.blocks, oracleBlock{text: text})
		}
	}
}

// pageBreak ends the text before a manual page break as its own oracleBlock.
func (p *oracleParser) pageBreak() {
	para := p.top()
	if text := clean(para.sb.String()); text != "" {
		p.blocks = append(p.blocks, oracleBlock{text: text, heading: para.heading})
	}
	para.sb.Reset()
	p.emitBreak()
}

func (p *oracleParser) emitBreak() {
	p.hasBreaks = true
	if n := len(p.blocks); n > 0 && p.blocks[n-1].pageBreak {
		return // an empty page carries nothing
	}
	p.blocks = append(p.blocks, oracleBlock{pageBreak: true})
}

func oracleLayout(blocks []oracleBlock, hasBreaks bool, limits extract.Limits) ([]extract.Unit, error) {
	if hasBreaks {
		var pages []string
		var cur []string
		flush := func() {
			if len(cur) > 0 {
				pages = append(pages, strings.Join(cur, "\n\n"))
				cur = nil
			}
		}
		fits := true
		for _, b := range blocks {
			if b.pageBreak {
				flush()
				continue
			}
			cur = append(cur, b.text)
		}
		flush()
		for _, pg := range pages {
			if utf8.RuneCountInString(pg) > pageSlack*limits.MaxSectionChars {
				fits = false
				break
			}
		}
		if fits {
			if len(pages) > limits.MaxPages {
				return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("document has %d pages, over the limit of %d", len(pages), limits.MaxPages)}
			}
			units := make([]extract.Unit, len(pages))
			for i, pg := range pages {
				units[i] = extract.Unit{Index: i + 1, Kind: "page", Text: pg}
			}
			return units, nil
		}
	}
	s := plaintext.NewSplitter("section", limits)
	for _, b := range blocks {
		switch {
		case b.pageBreak:
			s.Break()
		case b.heading:
			s.Heading(b.text)
		default:
			s.Block(b.text)
		}
	}
	return s.Units()
}
