package docx

// The slice-based layout that Extract used before Stream: the parser's
// blocks for the whole document in memory, then the layout decision.
// Tests and benchmarks compare Stream's collector against it.

import (
	"context"
	"fmt"
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
	var sink oracleSink
	if err := parse(rc, &sink); err != nil {
		return nil, err
	}
	return oracleLayout(sink.blocks, sink.hasBreaks, limits)
}

type oracleBlock struct {
	text      string
	heading   bool
	pageBreak bool
}

// oracleSink gathers the parser's blocks in a slice: the whole document
// before the layout is decided.
type oracleSink struct {
	blocks    []oracleBlock
	hasBreaks bool
}

func (s *oracleSink) block(text string, heading bool) {
	s.blocks = append(s.blocks, oracleBlock{text: text, heading: heading})
}

func (s *oracleSink) pageBreak() {
	s.hasBreaks = true
	if n := len(s.blocks); n > 0 && s.blocks[n-1].pageBreak {
		return // an empty page carries nothing
	}
	s.blocks = append(s.blocks, oracleBlock{pageBreak: true})
}

func (s *oracleSink) failed() error { return nil }

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
