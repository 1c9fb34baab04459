package pdftext

import (
	"cmp"
	"math"
	"slices"
	"strings"
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
	// Top to bottom; content order is kept for equal baselines.
	slices.SortStableFunc(gs, func(a, b glyph) int { return cmp.Compare(b.y, a.y) })

	var b strings.Builder
	for start := 0; start < len(gs); {
		end := start + 1
		for end < len(gs) && gs[start].y-gs[end].y <= lineTolerance*math.Max(gs[start].size, gs[end].size) {
			end++
		}
		line := gs[start:end]
		slices.SortStableFunc(line, func(a, b glyph) int { return cmp.Compare(a.x, b.x) })
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		writeLine(&b, line)
		start = end
	}
	return b.String()
}

func writeLine(b *strings.Builder, line []glyph) {
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
				b.WriteByte(' ')
			}
		}
		b.WriteString(g.s)
		prev, pendingSpace = g, false
	}
}
