package pdftext

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text assembly from glyph positions.
const (
	// lineTolerance: glyphs whose baselines differ by less than this
	// fraction of the font size share a line (covers sub/superscripts
	// less than half a line away).
	lineTolerance = 0.4
	// wordGap: a horizontal gap wider than this fraction of the font size
	// between one glyph's end and the next glyph's start is a word break.
	// Spaces are 0.25-0.28 em in common fonts; pair kerning is < 0.1 em.
	wordGap = 0.15
	// estWidth is the advance assumed for a glyph whose font has no
	// /Widths (the library then reports width 0).
	estWidth = 0.5
)

type glyph struct {
	x, y, w, size float64
	s             string
	space         bool
	dir           orientation
}

// assemble turns positioned glyphs into lines of words: lines top to
// bottom, glyphs left to right within a line, a space wherever the
// producer drew one or left a gap. It reorders gs.
func assemble(in []glyph) string { return new(layout).assemble(in) }

// layout holds buffers reused from page to page.
type layout struct {
	lines  [][]glyph
	words  []word
	byX    []xKey
	keys   []lineKey
	merged []lineKey
	sorted []glyph
	out    []byte
}

// lineKey is what orders a glyph into lines: sorting these small keys and
// then moving each glyph once costs a fraction of a stable sort of the
// glyphs themselves, which on a page drawn column by column moves every
// glyph many times.
type lineKey struct {
	y   float64
	i   int32 // position in content order, which breaks ties
	dir orientation
}

// xKey is a word's left edge, with the word's place in its region.
type xKey struct {
	x0 float64
	i  int32
}

func (l *layout) assemble(in []glyph) string {
	gs := in[:0]
	for _, g := range in {
		if g.s == "" || g.s == "\n" || g.s == "\r" ||
			math.IsNaN(g.x) || math.IsNaN(g.y) || math.IsInf(g.x, 0) || math.IsInf(g.y, 0) {
			continue
		}
		g.size = math.Abs(g.size)
		if g.size < 0.5 || math.IsNaN(g.size) || math.IsInf(g.size, 0) {
			g.size = 1
		}
		if g.w <= 0 || math.IsNaN(g.w) || math.IsInf(g.w, 0) {
			g.w = estWidth * g.size * float64(utf8.RuneCountInString(g.s))
		}
		g.space = g.space || strings.TrimSpace(g.s) == ""
		gs = append(gs, g)
	}
	if len(gs) == 0 {
		return ""
	}
	// By orientation, then top to bottom; content order is kept for equal
	// baselines. Content is usually drawn in reading order already.
	byLine := func(a, b glyph) int {
		if a.dir != b.dir {
			return cmp.Compare(a.dir, b.dir)
		}
		return cmp.Compare(b.y, a.y)
	}
	if !slices.IsSortedFunc(gs, byLine) {
		gs = l.sortLines(gs)
	}

	lines := l.lines[:0]
	for start := 0; start < len(gs); {
		end := start + 1
		for end < len(gs) && gs[end].dir == gs[start].dir &&
			gs[start].y-gs[end].y <= lineTolerance*max(gs[start].size, gs[end].size) {
			end++
		}
		line := gs[start:end]
		byX := func(a, b glyph) int { return cmp.Compare(a.x, b.x) }
		if !slices.IsSortedFunc(line, byX) {
			slices.SortStableFunc(line, byX)
		}
		lines = append(lines, line)
		start = end
	}

	l.lines = lines
	b := l.out[:0]
	for _, region := range l.columns(lines) {
		prevLine := -1
		for i := 0; i < len(region); {
			// The region's words on one line are neighbours on it.
			j := i + 1
			for j < len(region) && region[j].line == region[i].line {
				j++
			}
			li := region[i].line
			text := lines[li][region[i].from:region[j-1].to]
			if len(b) > 0 {
				if prevLine >= 0 && hyphenated(b, text) {
					b = b[:len(b)-1]
				} else {
					b = append(b, '\n')
				}
			}
			b = appendLine(b, text)
			prevLine, i = li, j
		}
	}
	l.out = b
	return string(b)
}

// sortLines returns gs by orientation, then top to bottom, content order
// kept for equal baselines, in a buffer of l's.
func (l *layout) sortLines(gs []glyph) []glyph {
	// A page near the glyph limit leaves large buffers; the next pages
	// need a fraction of them.
	if cap(l.sorted) > 1<<16 {
		l.sorted, l.keys, l.merged = nil, nil, nil
	}
	keys := l.keys[:0]
	for i, g := range gs {
		keys = append(keys, lineKey{y: g.y, i: int32(i), dir: g.dir})
	}
	keys, l.merged = mergeRuns(keys, slices.Grow(l.merged[:0], len(keys))[:len(keys)])
	sorted := l.sorted[:0]
	for _, k := range keys {
		sorted = append(sorted, gs[k.i])
	}
	l.keys, l.sorted = keys, sorted
	return sorted
}

// lineBefore orders glyphs by orientation, then top to bottom.
func lineBefore(a, b lineKey) bool {
	if a.dir != b.dir {
		return a.dir < b.dir
	}
	return a.y > b.y
}

// mergeRuns sorts keys by lineBefore, stably, by merging the runs already
// in order: content is drawn in a few such runs (a column, a header, a
// footnote), so this takes a few passes where a sort takes log n. buf is
// as long as keys; the sorted keys come back in one of the two, and the
// other is returned as the buffer.
func mergeRuns(keys, buf []lineKey) (sorted, spare []lineKey) {
	bounds := []int{0}
	for i := 1; i < len(keys); i++ {
		if lineBefore(keys[i], keys[i-1]) {
			bounds = append(bounds, i)
		}
	}
	bounds = append(bounds, len(keys))
	src, dst := keys, buf
	for len(bounds) > 2 {
		merged := bounds[:1]
		for r := 0; r+1 < len(bounds); r += 2 {
			lo, mid, hi := bounds[r], bounds[r+1], bounds[len(bounds)-1]
			if r+2 < len(bounds) {
				hi = bounds[r+2]
			}
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if lineBefore(src[j], src[i]) {
					dst[k], j = src[j], j+1
				} else {
					dst[k], i = src[i], i+1
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
			merged = append(merged, hi)
		}
		bounds = merged
		src, dst = dst, src
	}
	return src, dst
}

// Column detection.
const (
	// gutter: an empty vertical strip at least this wide (in font sizes)
	// running past the text of at least two lines on each side separates
	// columns. Wider than any justified word space.
	gutter = 1.0
	// paraGap: baselines further apart than this (in font sizes) start a
	// new block, which may have its own columns (a title above them).
	paraGap = 1.6
)

// word is a run of glyphs on one line: lines[line][from:to].
type word struct {
	line, from, to int
	x0, x1, y      float64
	size           float64
	dir            orientation
}

// columns splits the page's words into regions read one after the other,
// by recursive cuts: blocks one above the other, then columns side by
// side (left first). A page without columns is one region. Within a region
// words keep line order, left to right.
func (l *layout) columns(lines [][]glyph) [][]word {
	words := l.words[:0]
	for li, line := range lines {
		from := -1
		for i := range line {
			g := &line[i]
			if from >= 0 && (g.space || g.x-(line[i-1].x+line[i-1].w) > wordGap*max(g.size, line[i-1].size)) {
				words = appendWord(words, line, li, from, i)
				from = -1
			}
			if !g.space && from < 0 {
				from = i
			}
		}
		if from >= 0 {
			words = appendWord(words, line, li, from, len(line))
		}
	}
	l.words = words
	return l.cut(words, nil, 0)
}

func appendWord(words []word, line []glyph, li, from, to int) []word {
	// Trailing drawn spaces stay out of the box.
	for to > from+1 && line[to-1].space {
		to--
	}
	w := word{line: li, from: from, to: to, x0: line[from].x, y: line[from].y, dir: line[from].dir}
	for _, g := range line[from:to] {
		w.x1 = max(w.x1, g.x+g.w)
		w.size = max(w.size, g.size)
	}
	return append(words, w)
}

// maxCuts bounds the recursion on pathological pages.
const maxCuts = 32

func (l *layout) cut(ws []word, out [][]word, depth int) [][]word {
	if len(ws) == 0 {
		return out
	}
	if depth >= maxCuts || ws[0].line == ws[len(ws)-1].line {
		return append(out, ws)
	}
	// Blocks first: split where baselines are far apart (or the direction
	// turns), so a title above two columns is read before them.
	start := 0
	for i := 1; i < len(ws); i++ {
		a, b := ws[i-1], ws[i]
		if a.line != b.line && (a.dir != b.dir || a.y-b.y > paraGap*max(a.size, b.size)) {
			out = l.cut(ws[start:i], out, depth+1)
			start = i
		}
	}
	if start > 0 {
		return l.cut(ws[start:], out, depth+1)
	}
	if left, right, ok := l.splitColumns(ws); ok {
		return l.cut(right, l.cut(left, out, depth+1), depth+1)
	}
	return append(out, ws)
}

// splitColumns finds the leftmost gutter in ws and returns the words on
// either side, each still in line order.
func (l *layout) splitColumns(ws []word) (left, right []word, ok bool) {
	byX := l.byX[:0]
	for i, w := range ws {
		byX = append(byX, xKey{x0: w.x0, i: int32(i)})
	}
	l.byX = byX
	slices.SortFunc(byX, func(a, b xKey) int {
		if c := cmp.Compare(a.x0, b.x0); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	reach := ws[byX[0].i].x1
	for i := 1; i < len(byX); i++ {
		w := ws[byX[i].i]
		if w.x0-reach > gutter*w.size && spansLines(ws, byX[:i]) && spansLines(ws, byX[i:]) {
			edge := w.x0
			for _, w := range ws {
				if w.x0 < edge {
					left = append(left, w)
				} else {
					right = append(right, w)
				}
			}
			return left, right, true
		}
		reach = max(reach, w.x1)
	}
	return nil, nil, false
}

// spansLines reports whether the words of ws that keys name lie on at
// least two lines.
func spansLines(ws []word, keys []xKey) bool {
	first := ws[keys[0].i].line
	for _, k := range keys[1:] {
		if ws[k.i].line != first {
			return true
		}
	}
	return false
}

// hyphenated reports whether the text so far ends in a word broken at the
// line end: a hyphen after a letter, and the next line going on with a
// lower-case letter. Such words are joined, as pdftotext joins them.
func hyphenated(b []byte, next []glyph) bool {
	if len(b) < 2 || b[len(b)-1] != '-' {
		return false
	}
	before, _ := utf8.DecodeLastRune(b[:len(b)-1])
	if !unicode.IsLetter(before) {
		return false
	}
	for _, g := range next {
		if !g.space {
			first, _ := utf8.DecodeRuneInString(g.s)
			return unicode.IsLower(first)
		}
	}
	return false
}

func appendLine(b []byte, line []glyph) []byte {
	var prev *glyph
	pendingSpace := false
	for i := range line {
		g := &line[i]
		if g.space {
			pendingSpace = prev != nil
			continue
		}
		if prev != nil {
			gap := g.x - (prev.x + prev.w)
			// Fake bold: the same glyph drawn twice at (almost) one spot.
			if g.s == prev.s && math.Abs(g.x-prev.x) < 0.1*g.size {
				continue
			}
			if pendingSpace || gap > wordGap*max(g.size, prev.size) {
				b = append(b, ' ')
			}
		}
		b = append(b, g.s...)
		prev, pendingSpace = g, false
	}
	return b
}

// unligature spells out the typographic ligatures (U+FB00-U+FB06) that
// fonts map their ligature glyphs to, so that "workﬂow" is found as
// "workflow".
func unligature(s string) string {
	if len(s) == 3 && s[0] == 0xef && s[1] == 0xac && s[2] >= 0x80 && s[2] <= 0x86 {
		return ligatures[s[2]-0x80]
	}
	return s
}

var ligatures = [...]string{"ff", "fi", "fl", "ffi", "ffl", "st", "st"}
