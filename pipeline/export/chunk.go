package export

import (
	"strings"
	"unicode/utf8"
)

// Tokens approximates how many tokens a language model's tokenizer makes
// of s: a token per four characters, but at least one per word. On
// English prose that is within about 10% of the BPE tokenizers of the
// common models; code and numbers run higher. It needs no vocabulary,
// and the same text always counts the same.
func Tokens(s string) int {
	chars := (utf8.RuneCountInString(s) + 3) / 4
	return max(chars, len(strings.Fields(s)))
}

// block is a unit a chunk is made of: a paragraph, a heading, a table or
// a fenced code block, from one segment.
type block struct {
	text    string
	segment int
	heading bool // a heading line: it changes the heading path
	level   int  // the heading's level, 1-6
	whole   bool // a table or code block: kept whole when it fits
}

// blocks splits a segment's text into blocks: paragraphs at blank lines,
// a fenced code block (```) and a table (lines starting with |, or two or
// more lines with tabs, as the extractors write table rows) each whole,
// and every Markdown heading line (# to ######) on its own. titled says
// the segment is a section that starts with its heading on a line of
// its own, as the Markdown, HTML and DOCX extractors write them; that
// line is taken as a first-level heading.
func blocks(segment int, text string, titled bool) []block {
	var out []block
	var para []string
	flush := func(whole bool) {
		if len(para) > 0 {
			if t := strings.TrimSpace(strings.Join(para, "\n")); t != "" {
				out = append(out, block{text: t, segment: segment, whole: whole})
			}
			para = para[:0]
		}
	}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			flush(false)
			para = append(para, line)
			for i++; i < len(lines); i++ {
				para = append(para, lines[i])
				if strings.HasPrefix(strings.TrimSpace(lines[i]), "```") {
					break
				}
			}
			flush(true)
		case strings.HasPrefix(trimmed, "|"):
			flush(false)
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				para = append(para, lines[i])
			}
			i--
			flush(true)
		case strings.Contains(trimmed, "\t") && i+1 < len(lines) && strings.Contains(lines[i+1], "\t"):
			flush(false)
			for ; i < len(lines) && strings.Contains(strings.TrimSpace(lines[i]), "\t"); i++ {
				para = append(para, lines[i])
			}
			i--
			flush(true)
		case headingLevel(trimmed) > 0:
			flush(false)
			out = append(out, block{text: trimmed, segment: segment, heading: true, level: headingLevel(trimmed)})
		case trimmed == "":
			flush(false)
		default:
			para = append(para, line)
		}
	}
	flush(false)
	if titled && len(out) > 0 && !out[0].heading && !out[0].whole && isTitle(out[0].text) {
		out[0].heading, out[0].level, out[0].text = true, 1, "# "+out[0].text
	}
	return out
}

// isTitle reports whether a section's first block reads as its heading:
// one short line that does not end a sentence.
func isTitle(s string) bool {
	return !strings.Contains(s, "\n") && utf8.RuneCountInString(s) <= 200 && !strings.ContainsAny(s[len(s)-1:], ".!?:;,")
}

// headingLevel is the level of a Markdown ATX heading line, 0 for any
// other line.
func headingLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(line) || line[n] != ' ' {
		return 0
	}
	return n
}

// headingText is a heading line without its #s.
func headingText(line string) string {
	return strings.TrimSpace(strings.TrimLeft(line, "#"))
}

// headings tracks the heading path through a document's text.
type headings struct {
	levels []int
	path   []string
}

// enter applies a heading line of the given level.
func (h *headings) enter(level int, text string) {
	for len(h.levels) > 0 && h.levels[len(h.levels)-1] >= level {
		h.levels = h.levels[:len(h.levels)-1]
		h.path = h.path[:len(h.path)-1]
	}
	h.levels = append(h.levels, level)
	h.path = append(h.path, headingText(text))
}

// current is a copy of the path.
func (h *headings) current() []string { return append([]string{}, h.path...) }

// Chunk is a stretch of one document's text of at most the chunker's
// token budget.
type Chunk struct {
	Index       int      // 1-based within the document
	Segments    []int    // the segments its text comes from, in order
	HeadingPath []string // the section it is in
	Text        string
	Tokens      int
}

// Chunker cuts one document's text into chunks: a chunk never spans two
// sections (a heading starts a new one), so a section that fits in the
// budget is one chunk; a table or code block is kept whole when it fits
// in one, and otherwise split at lines; a paragraph too long for one is
// split at words. Consecutive chunks of one section share Overlap tokens
// of text.
type Chunker struct {
	Budget  int // tokens a chunk holds at most
	Overlap int // tokens of the previous chunk a chunk of the same section starts with; less than Budget
	Emit    func(Chunk) error

	heads   headings
	index   int
	parts   []string
	segs    []int
	tokens  int
	overlap bool // parts holds only the overlap carried over
}

// Add cuts segment's text into the chunks; Flush ends the document.
// titled is as for blocks.
func (c *Chunker) Add(segment int, text string, titled bool) error {
	for _, b := range blocks(segment, text, titled) {
		if b.heading {
			if err := c.emit(false); err != nil {
				return err
			}
			c.heads.enter(b.level, b.text)
		}
		if err := c.add(b); err != nil {
			return err
		}
	}
	return nil
}

// Flush emits what is left of the document and starts afresh.
func (c *Chunker) Flush() error {
	err := c.emit(false)
	*c = Chunker{Budget: c.Budget, Overlap: c.Overlap, Emit: c.Emit}
	return err
}

func (c *Chunker) add(b block) error {
	n := Tokens(b.text)
	if n > c.Budget {
		return c.addPieces(b)
	}
	if c.tokens+n > c.Budget && !c.overlapOnly() {
		if err := c.emit(true); err != nil {
			return err
		}
	}
	if c.tokens+n > c.Budget { // the overlap and the block do not fit together
		c.reset()
	}
	c.append(b.text, b.segment, n)
	return nil
}

// addPieces adds a block larger than the budget in pieces that fit: a
// table or code block at lines, a paragraph at words.
func (c *Chunker) addPieces(b block) error {
	sep, units := " ", strings.Fields(b.text)
	if b.whole {
		sep, units = "\n", strings.Split(b.text, "\n")
	}
	var piece []string
	chars, words := 0, 0 // of the piece joined, counted as Tokens counts
	// The first piece fills what the chunk being built has room for.
	room := c.Budget
	if len(c.parts) > 0 && !c.overlapOnly() && c.Budget-c.tokens-1 >= c.Budget/4 {
		room = c.Budget - c.tokens - 1
	}
	for _, u := range units {
		uc, uw := utf8.RuneCountInString(u)+len(sep), len(strings.Fields(u))
		if len(piece) > 0 && max((chars+uc+3)/4, words+uw) > room {
			if err := c.add(block{text: strings.Join(piece, sep), segment: b.segment}); err != nil {
				return err
			}
			// Later pieces leave room for the overlap they start with.
			piece, chars, words, room = piece[:0], 0, 0, max(c.Budget-c.Overlap-1, 1)
		}
		if Tokens(u) > c.Budget { // one word or line over the budget: cut it at characters
			for _, part := range splitRunes(u, c.Budget*4) {
				if err := c.add(block{text: part, segment: b.segment}); err != nil {
					return err
				}
			}
			continue
		}
		piece = append(piece, u)
		chars, words = chars+uc, words+uw
	}
	if len(piece) > 0 {
		return c.add(block{text: strings.Join(piece, sep), segment: b.segment})
	}
	return nil
}

func splitRunes(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > n {
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return append(out, string(r))
}

func (c *Chunker) overlapOnly() bool { return c.overlap && len(c.parts) > 0 }

func (c *Chunker) append(text string, segment, tokens int) {
	c.parts = append(c.parts, text)
	if len(c.segs) == 0 || c.segs[len(c.segs)-1] != segment {
		c.segs = append(c.segs, segment)
	}
	c.tokens = Tokens(strings.Join(c.parts, "\n\n"))
	c.overlap = false
}

func (c *Chunker) reset() {
	c.parts, c.segs, c.tokens, c.overlap = nil, nil, 0, false
}

// emit sends the chunk being built, if it holds more than an overlap;
// carry starts the next one with the overlap (same section only).
func (c *Chunker) emit(carry bool) error {
	if len(c.parts) == 0 || c.overlapOnly() {
		c.reset()
		return nil
	}
	text := strings.Join(c.parts, "\n\n")
	c.index++
	ch := Chunk{Index: c.index, Segments: c.segs, HeadingPath: c.heads.current(), Text: text, Tokens: c.tokens}
	last := c.segs[len(c.segs)-1]
	c.reset()
	if err := c.Emit(ch); err != nil {
		return err
	}
	if carry && c.Overlap > 0 {
		if tail := tailTokens(text, c.Overlap); tail != "" {
			c.parts, c.segs, c.tokens, c.overlap = []string{tail}, []int{last}, Tokens(tail), true
		}
	}
	return nil
}

// tailTokens is the longest run of whole words at the end of text that
// counts at most n tokens.
func tailTokens(text string, n int) string {
	words := strings.Fields(text)
	i := len(words)
	for i > 0 && Tokens(strings.Join(words[i-1:], " ")) <= n {
		i--
	}
	return strings.Join(words[i:], " ")
}
