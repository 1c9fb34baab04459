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
func assemble(in []glyph) string {
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
		slices.SortStableFunc(gs, byLine)
	}

	var b []byte
	for start := 0; start < len(gs); {
		end := start + 1
		for end < len(gs) && gs[end].dir == gs[start].dir &&
			gs[start].y-gs[end].y <= lineTolerance*math.Max(gs[start].size, gs[end].size) {
			end++
		}
		line := gs[start:end]
		byX := func(a, b glyph) int { return cmp.Compare(a.x, b.x) }
		if !slices.IsSortedFunc(line, byX) {
			slices.SortStableFunc(line, byX)
		}
		if len(b) > 0 {
			if hyphenated(b, line) {
				b = b[:len(b)-1]
			} else {
				b = append(b, '\n')
			}
		}
		b = appendLine(b, line)
		start = end
	}
	return string(b)
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
			if pendingSpace || gap > wordGap*math.Max(g.size, prev.size) {
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
