package plaintext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Splitter groups blocks of text (paragraphs, tables, lists, code) into
// sections of about limits.MaxSectionChars characters, in order. A block is
// never cut unless it alone is longer than a section; then it is cut at
// line breaks, else between words, and only a single run of text without
// spaces longer than a section is cut mid-word. Blocks inside a section are
// separated by a blank line.
//
// The flowing-text extractors (plain text, Markdown, HTML, DOCX) share it
// so that their sections look alike.
type Splitter struct {
	max      int
	maxUnits int
	kind     string
	cur      []string
	curLen   int // in runes, including separators
	curBody  bool
	n        int // units emitted so far
	units    []extract.Unit
	// sink, when set, receives each unit as soon as it is complete, and
	// units stays empty: memory stays bounded by one section.
	sink func(extract.Unit) error
	err  error
}

const blockSep = "\n\n"

// NewSplitter returns a Splitter for units of the given kind ("section" or
// "page"), bounded by limits.MaxSectionChars and limits.MaxPages.
func NewSplitter(kind string, limits extract.Limits) *Splitter {
	limits = limits.WithDefaults()
	return &Splitter{max: limits.MaxSectionChars, maxUnits: limits.MaxPages, kind: kind}
}

// NewStreamingSplitter returns a Splitter that hands each unit to emit as
// soon as it is complete instead of keeping it. An error from emit stops
// the splitter: later blocks are ignored and Close returns the error.
func NewStreamingSplitter(kind string, limits extract.Limits, emit func(extract.Unit) error) *Splitter {
	s := NewSplitter(kind, limits)
	s.sink = emit
	return s
}

// Block adds a block of body text. Blank lines around it and trailing
// spaces are dropped; the indentation of its first line is kept (code).
func (s *Splitter) Block(text string) {
	text = strings.TrimLeft(strings.TrimRight(text, " \t\n"), "\n")
	if strings.TrimSpace(text) == "" || s.err != nil {
		return
	}
	s.add(text)
	s.curBody = true
}

// Heading starts a new section with a heading line, unless the current
// section holds nothing but headings (a title and its subtitle stay
// together with the text that follows them).
func (s *Splitter) Heading(text string) {
	text = strings.TrimSpace(text)
	if text == "" || s.err != nil {
		return
	}
	if s.curBody {
		s.Break()
	}
	s.add(text)
}

// Break ends the current section; the next block starts a new one. Breaks
// with nothing in between do not make empty units.
func (s *Splitter) Break() {
	if s.err != nil || len(s.cur) == 0 {
		return
	}
	s.emit(strings.Join(s.cur, blockSep))
	s.cur, s.curLen, s.curBody = s.cur[:0], 0, false
}

// Close ends the last section and returns the number of units emitted.
// The error is the first one emit returned, or a TooLargeError when there
// would be more than limits.MaxPages units.
func (s *Splitter) Close() (int, error) {
	s.Break()
	return s.n, s.err
}

// Units ends the last section and returns all of them, 1-based. The error
// is a TooLargeError when there would be more than limits.MaxPages units.
// A streaming Splitter returns none: they went to its emit function.
func (s *Splitter) Units() ([]extract.Unit, error) {
	s.Break()
	if s.err != nil {
		return nil, s.err
	}
	if s.units == nil {
		return []extract.Unit{}, nil
	}
	return s.units, nil
}

// Len is the number of units emitted so far.
func (s *Splitter) Len() int { return s.n }

func (s *Splitter) add(text string) {
	n := utf8.RuneCountInString(text)
	sep := 0
	if len(s.cur) > 0 {
		sep = len(blockSep)
	}
	if len(s.cur) > 0 && s.curLen+sep+n > s.max {
		s.Break()
		sep = 0
	}
	if n <= s.max {
		s.cur = append(s.cur, text)
		s.curLen += sep + n
		return
	}
	// One block larger than a section: its pieces fill sections of their own.
	s.Break()
	pieces := cut(text, s.max)
	for _, p := range pieces[:len(pieces)-1] {
		s.emit(p)
	}
	s.endLong(pieces[len(pieces)-1])
}

// beginLong, emit and endLong are add's path for a block larger than a
// section, for a caller that cuts the block with cutOnce as it arrives
// (plain text's paragraphs, which may be as long as the file).
func (s *Splitter) beginLong() { s.Break() }

// endLong makes the block's last piece the start of the next section.
func (s *Splitter) endLong(last string) {
	if s.err != nil {
		return
	}
	s.cur = append(s.cur, last)
	s.curLen = utf8.RuneCountInString(last)
	s.curBody = true
}

func (s *Splitter) emit(text string) {
	if s.err != nil {
		return
	}
	if s.n >= s.maxUnits {
		s.err = &steperr.TooLargeError{Reason: fmt.Sprintf("document has more than %d %ss", s.maxUnits, s.kind)}
		return
	}
	s.n++
	u := extract.Unit{Index: s.n, Kind: s.kind, Text: text}
	if s.sink != nil {
		s.err = s.sink(u)
		return
	}
	s.units = append(s.units, u)
}

// cut splits text longer than max runes into pieces of at most max runes,
// preferring line breaks, then spaces, then any rune boundary.
func cut(text string, max int) []string {
	var out []string
	for {
		piece, rest, ok := cutOnce(text, max)
		if !ok {
			break // the rest fits in one piece
		}
		if piece != "" {
			out = append(out, piece)
		}
		text = rest
	}
	if text != "" || len(out) == 0 {
		out = append(out, text)
	}
	return out
}

// cutOnce is one step of cut: when text is longer than max runes it
// returns the first piece (trimmed, maybe empty) and the trimmed rest.
// The piece depends only on text's first max runes and one byte more, and
// the rest ends where text does (less trailing space): so a caller that
// sees a long block in parts may cut a part that ends in a non-space and
// get what cut gives for the whole block.
func cutOnce(text string, max int) (piece, rest string, ok bool) {
	// Byte offset of the rune just past max runes, found without counting
	// the whole rest of the text: counting it on every cut made one long
	// block quadratic in its length.
	limit, runes := 0, 0
	for runes < max && limit < len(text) {
		_, size := utf8.DecodeRuneInString(text[limit:])
		limit += size
		runes++
	}
	if limit >= len(text) {
		return "", text, false
	}
	// A line break in the first half would leave a stub piece.
	at := strings.LastIndexByte(text[:limit+1], '\n')
	if at < limit/2 {
		at = strings.LastIndexFunc(text[:limit+1], unicode.IsSpace)
	}
	if at <= 0 {
		at = limit
	}
	return strings.TrimSpace(text[:at]), strings.TrimSpace(text[at:]), true
}
