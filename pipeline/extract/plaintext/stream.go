package plaintext

import (
	"bytes"
	"context"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// chunkSize is how much of the file Stream reads at a time. Tests pass
// stream smaller ones so that characters, CRLFs and lines are cut by chunk
// boundaries.
const chunkSize = 256 << 10

var _ extract.UnitStreamer = Stream

// Stream reads a text file in chunks and calls emit with each section as
// soon as it is complete: the sections Extract returns, in order, while
// holding a few chunks and about one section of text whatever the file's
// size. It reads the file twice: once to choose the encoding as
// sniff.DetectEncoding would over all of it, once to decode and split it.
// It returns the number of sections; an error from emit stops it and is
// returned.
func Stream(ctx context.Context, path string, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
	return stream(ctx, path, limits, chunkSize, emit)
}

// stream is Stream reading chunk bytes at a time.
func stream(ctx context.Context, path string, limits extract.Limits, chunk int, emit func(extract.Unit) error) (int, error) {
	limits = limits.WithDefaults()
	t, err := openText(ctx, path, limits, chunk)
	if err != nil {
		return 0, err
	}
	defer func() { _ = t.Close() }()
	s := NewStreamingSplitter("section", limits, emit)
	if err := splitStream(ctx, t, s, limits); err != nil {
		return 0, err
	}
	return s.Close()
}

// splitStream feeds the paragraphs of the text to s, a part at a time; it
// stops at s's first error.
func splitStream(ctx context.Context, t *TextReader, s *Splitter, limits extract.Limits) error {
	p := newParagraphs(s, limits)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := t.Next()
		if err == io.EOF {
			p.close()
			return nil
		}
		if err != nil {
			return err
		}
		p.write(b)
		if s.err != nil {
			return nil // Close reports it
		}
	}
}

// cleaner is Clean for text that arrives in chunks of whole characters: a
// CR at the end of one chunk and an LF at the start of the next make one
// newline.
type cleaner struct {
	afterCR   bool // the last character was a CR: a following LF is dropped
	inInvalid bool // the last bytes were invalid UTF-8, already one U+FFFD
	out       []byte
}

// clean returns b cleaned: b itself when Clean would leave it alone, else
// a buffer reused by the next call.
func (c *cleaner) clean(b []byte) []byte {
	if !c.afterCR && !c.inInvalid && cleanBytes(b) {
		return b
	}
	out := c.out[:0]
	for i := 0; i < len(b); {
		r, size := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(b[i:])
		}
		afterCR, inInvalid := c.afterCR, c.inInvalid
		c.afterCR, c.inInvalid = false, false
		switch {
		case r == '\r':
			out = append(out, '\n')
			c.afterCR = true
		case r == '\n':
			if !afterCR {
				out = append(out, '\n')
			}
		case r == '\t' || r == '\f':
			out = append(out, byte(r))
		case r < 0x20 || r == 0x7F || (r >= 0x80 && r <= 0x9F) || r == '\uFEFF':
			// NUL, other controls and stray BOMs carry no text
		case r == utf8.RuneError && size == 1:
			// Clean's ToValidUTF8: one U+FFFD a run (the decoders leave
			// no invalid bytes; this is for completeness)
			if !inInvalid {
				out = utf8.AppendRune(out, r)
			}
			c.inInvalid = true
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	c.out = out
	return out
}

// cleanBytes is clean for bytes: whether cleaner would leave b alone.
func cleanBytes(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i, c := range b {
		switch {
		case c < 0x20:
			if c != '\n' && c != '\t' && c != '\f' {
				return false
			}
		case c < 0x7F:
		case c == 0x7F:
			return false
		case c == 0xC2: // U+0080 to U+009F are C2 80 to C2 9F
			if i+1 < len(b) && b[i+1] <= 0x9F {
				return false
			}
		case c == 0xEF: // U+FEFF is EF BB BF
			if i+2 < len(b) && b[i+1] == 0xBB && b[i+2] == 0xBF {
				return false
			}
		}
	}
	return true
}

// paragraphs applies Split's rules to cleaned text that arrives in parts:
// lines are cut at LF, segments of a line at form feeds; a segment's
// trailing spaces and tabs are dropped; a blank line or a form feed ends a
// paragraph; a paragraph's lines are joined by LF and it goes to the
// Splitter as one block. A paragraph longer than a section is cut as it
// arrives, so no line or paragraph is held whole.
type paragraphs struct {
	s   *Splitter
	max int // runes in a section

	// The segment being read.
	content bool   // it has a non-space character
	ws      []byte // whitespace since its last non-space (or its start)
	wsRunes int
	// wsTail is the last character dropped from a long ws that a trim of
	// spaces and tabs would keep (a no-break space, say).
	wsTail []byte

	// The paragraph being read: its text, or once it grew longer than a
	// section, the part not yet cut into pieces.
	para []byte
	long bool
	// cutAt is how long para may grow before pieces are cut from it.
	cutAt int
}

func newParagraphs(s *Splitter, limits extract.Limits) *paragraphs {
	limits = limits.WithDefaults()
	m := limits.MaxSectionChars
	// At most utf8.UTFMax bytes a rune: more than cutAt bytes are more
	// than max runes, so para holds more than a section when it is cut,
	// and at most a section after: cutting costs O(1) a byte.
	return &paragraphs{s: s, max: m, cutAt: 2 * utf8.UTFMax * (m + 1)}
}

// Character classes of ASCII bytes for write, as strings.TrimSpace and
// unicode.IsSpace see them (beyond ASCII, IsSpace decides; an invalid byte
// is text).
const (
	classText = iota
	classSpaceTab
	classSpace // other whitespace: kept by a trim of spaces and tabs
	classLF
	classFF
)

var asciiClass = func() (c [utf8.RuneSelf]uint8) {
	for i := range c {
		switch r := rune(i); {
		case r == ' ' || r == '\t':
			c[i] = classSpaceTab
		case r == '\n':
			c[i] = classLF
		case r == '\f':
			c[i] = classFF
		case unicode.IsSpace(r):
			c[i] = classSpace
		}
	}
	return c
}()

// spaceLead marks the first bytes of the whitespace characters beyond
// ASCII (U+0085, U+00A0, U+1680, U+2000 to U+3000). They are never
// continuation bytes, so a decoder starts a character at every one of
// them: a scan may step over all other bytes one at a time. It walks the
// White_Space table, which holds every character unicode.IsSpace accepts,
// rather than all 1.1 million code points: that took 4 ms at every start
// of every docpipe command.
var spaceLead = func() (lead [256]bool) {
	mark := func(r rune) {
		if r >= utf8.RuneSelf && unicode.IsSpace(r) {
			var b [utf8.UTFMax]byte
			utf8.EncodeRune(b[:], r)
			lead[b[0]] = true
		}
	}
	for _, rg := range unicode.White_Space.R16 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			mark(r)
		}
	}
	for _, rg := range unicode.White_Space.R32 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			mark(r)
		}
	}
	return lead
}()

// write takes the next part of the text; it ends on a character boundary.
func (p *paragraphs) write(b []byte) {
	for len(b) > 0 {
		end := bytes.IndexByte(b, '\n')
		if end < 0 {
			end = len(b)
		}
		if ff := bytes.IndexByte(b[:end], '\f'); ff >= 0 {
			end = ff
		}
		p.fragment(b[:end])
		if end == len(b) {
			return
		}
		p.endSegment(b[end] == '\f')
		b = b[end+1:]
	}
}

// fragment takes a part of a segment (no LF or FF in it). Text and the
// whitespace between words go to the paragraph in spans as long as they
// come; whitespace at the fragment's end waits (it may be the segment's
// trailing space), and so does a run too long to keep whole (see space).
func (p *paragraphs) fragment(f []byte) {
	for i := 0; i < len(f); {
		j, runes, keep := spaceRun(f, i)
		if j > i {
			p.space(f[i:j], runes, keep)
		}
		// Text from j, with the whitespace runs inside it, up to one at
		// the end or one longer than max+1 characters.
		k := j
	span:
		for k < len(f) {
			if c := f[k]; c < utf8.RuneSelf {
				if asciiClass[c] == classText {
					k++
					continue
				}
			} else if !spaceLead[c] {
				k++ // inside a character that is not a space
				continue
			} else if r, size := utf8.DecodeRune(f[k:]); !unicode.IsSpace(r) {
				k += size
				continue
			}
			e, runes, _ := spaceRun(f, k)
			if e == len(f) || runes > p.max+1 {
				break span
			}
			k = e
		}
		if k > j {
			p.text(f[j:k])
		}
		i = k
	}
}

// spaceRun returns the end of the whitespace from f[i], its length in
// characters and whether it has any other than space and tab.
func spaceRun(f []byte, i int) (end, runes int, keep bool) {
	for i < len(f) {
		c := f[i]
		if c < utf8.RuneSelf {
			switch asciiClass[c] {
			case classSpaceTab:
			case classSpace:
				keep = true
			default:
				return i, runes, keep
			}
			i++
		} else {
			r, size := utf8.DecodeRune(f[i:])
			if !unicode.IsSpace(r) {
				return i, runes, keep
			}
			keep = true
			i += size
		}
		runes++
	}
	return i, runes, keep
}

// space holds whitespace until it turns out interior (text follows) or
// trailing (the segment ends). Of a run longer than a section only the
// first max+1 characters are kept: cut never looks further into a run of
// whitespace (a window starts after whitespace and spans max runes and a
// byte; a cut inside the run drops all of it), and the paragraph is over a
// section with either length. keep says b has a character other than space
// and tab.
func (p *paragraphs) space(b []byte, runes int, keep bool) {
	room := p.max + 1 - p.wsRunes
	if runes <= room {
		p.ws = append(p.ws, b...)
		p.wsRunes += runes
		return
	}
	at := 0
	for range room {
		_, size := utf8.DecodeRune(b[at:])
		at += size
	}
	p.ws = append(p.ws, b[:at]...)
	p.wsRunes += room
	if !keep {
		return
	}
	// The trim at the segment's end keeps up to the last such character.
	for end := len(b); end > at; {
		r, size := utf8.DecodeLastRune(b[at:end])
		if r != ' ' && r != '\t' {
			p.wsTail = append(p.wsTail[:0], b[end-size:end]...)
			return
		}
		end -= size
	}
}

// text adds non-space characters to the segment.
func (p *paragraphs) text(b []byte) {
	if !p.content && len(p.para) > 0 {
		p.appendPara([]byte{'\n'}) // lines of a paragraph
	}
	p.content = true
	p.appendPara(p.ws)
	p.ws, p.wsRunes, p.wsTail = p.ws[:0], 0, p.wsTail[:0]
	p.appendPara(b)
	if len(p.para) > p.cutAt {
		p.cutPieces()
	}
}

// endSegment ends a segment at a line end (LF or the end of the text) or
// at a form feed. Its trailing spaces and tabs are dropped; a blank line
// or a form feed ends the paragraph.
func (p *paragraphs) endSegment(formFeed bool) {
	if p.content {
		if len(p.wsTail) > 0 {
			// A long run whose end a trim keeps: its kept start and the
			// kept end are as long a run, ending where it did.
			p.appendPara(p.ws)
			p.appendPara(p.wsTail)
		} else {
			p.appendPara(trimSpaceTab(p.ws))
		}
	}
	if formFeed || !p.content {
		p.flush()
	}
	p.content = false
	p.ws, p.wsRunes, p.wsTail = p.ws[:0], 0, p.wsTail[:0]
}

func trimSpaceTab(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// close ends the text: its last line and paragraph.
func (p *paragraphs) close() {
	p.endSegment(false)
	p.flush()
}

func (p *paragraphs) appendPara(b []byte) { p.para = append(p.para, b...) }

// cutPieces cuts the pieces cut would cut from the paragraph so far; it
// ends in a non-space, so the pieces are final (see cutOnce).
func (p *paragraphs) cutPieces() {
	if !p.long {
		p.s.beginLong()
		p.long = true
	}
	p.para = append(p.para[:0], p.emitPieces(string(p.para))...)
}

// emitPieces hands the splitter every piece cut takes from text and
// returns what is left.
func (p *paragraphs) emitPieces(text string) string {
	for {
		piece, rest, ok := cutOnce(text, p.max)
		if !ok {
			return text
		}
		if piece != "" {
			p.s.emit(piece)
		}
		text = rest
	}
}

// flush hands the paragraph to the Splitter.
func (p *paragraphs) flush() {
	switch {
	case p.long:
		// The rest of a long paragraph: cut's last steps, trimmed at the
		// paragraph's end as cut trims it.
		p.s.endLong(p.emitPieces(strings.TrimRightFunc(string(p.para), unicode.IsSpace)))
	case len(p.para) > 0:
		p.s.Block(string(p.para))
	}
	p.para, p.long = p.para[:0], false
	if cap(p.para) > 4*p.cutAt {
		p.para = nil // one huge fragment grew it; let it go
	}
}
