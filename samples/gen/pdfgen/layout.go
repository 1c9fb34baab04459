package pdfgen

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"golang.org/x/text/encoding/charmap"
)

// Page geometry in points (US Letter).
const (
	marginLeft  = 72.0
	marginRight = 540.0
	bodyTop     = 700.0
	bodyBottom  = 80.0
)

type font struct {
	res    string // resource name
	widths *[224]uint16
}

var (
	helv      = font{"F1", &helveticaWidths}
	helvBold  = font{"F2", &helveticaBoldWidths}
	times     = font{"F3", &timesRomanWidths}
	timesBold = font{"F4", &timesBoldWidths}
)

// encode maps text to WinAnsi bytes; runes outside it become '?'.
func encode(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		b, ok := charmap.Windows1252.EncodeRune(r)
		if !ok {
			b = '?'
		}
		out = append(out, b)
	}
	return out
}

// width returns the advance of WinAnsi bytes in 1/1000 em.
func (f font) width(b []byte) float64 {
	var w float64
	for _, c := range b {
		if c >= 32 {
			w += float64(f.widths[c-32])
		}
	}
	return w
}

// literal writes b as a PDF literal string.
func literal(buf *bytes.Buffer, b []byte) {
	buf.WriteByte('(')
	for _, c := range b {
		if c == '(' || c == ')' || c == '\\' {
			buf.WriteByte('\\')
		}
		buf.WriteByte(c)
	}
	buf.WriteByte(')')
}

func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

type layout struct {
	tg  *textGen
	buf bytes.Buffer
}

// page returns the content stream of page p of total and its text.
func (l *layout) page(p, total int) ([]byte, string) {
	l.buf.Reset()
	var text []string
	g := l.tg
	body, bold := helv, helvBold
	if g.r.IntN(2) == 0 {
		body, bold = times, timesBold
	}

	// Header: two text objects on one baseline, the date right-aligned.
	company, date := g.pick(companies), g.date()
	l.textObject(helvBold, 9, marginLeft, 760, company)
	dw := helv.width(encode(date)) * 9 / 1000
	l.textObject(helv, 9, marginRight-dw, 760, date)
	text = append(text, company+" "+date)

	title := g.pick(titles)
	l.textObject(bold, 15, marginLeft, 730, title)
	text = append(text, title)

	size := 10.0 + float64(g.r.IntN(2))
	leading := size * 1.4
	y := bodyTop
	for y > bodyBottom+3*leading {
		if g.r.IntN(5) == 0 {
			// A table-like row: columns placed with separate moves.
			cols := []string{"Reference " + g.reference(), "Amount " + g.amount(), "Due " + g.date()}
			fmt.Fprintf(&l.buf, "BT\n/%s %s Tf\n", body.res, num(size))
			x := []float64{marginLeft, marginLeft + 170, marginLeft + 320}
			fmt.Fprintf(&l.buf, "%s %s Td\n", num(x[0]), num(y))
			for i, c := range cols {
				if i > 0 {
					fmt.Fprintf(&l.buf, "%s 0 Td\n", num(x[i]-x[i-1]))
				}
				literal(&l.buf, encode(c))
				l.buf.WriteString(" Tj\n")
			}
			l.buf.WriteString("ET\n")
			text = append(text, strings.Join(cols, " "))
			y -= 2 * leading
			continue
		}
		var para []string
		for range 2 + g.r.IntN(4) {
			para = append(para, strings.Fields(g.sentence())...)
		}
		lines := wrap(body, size, para, marginRight-marginLeft)
		fmt.Fprintf(&l.buf, "BT\n/%s %s Tf\n", body.res, num(size))
		for i, line := range lines {
			if y < bodyBottom {
				break
			}
			l.line(body, size, y, line, i == len(lines)-1)
			text = append(text, strings.Join(line, " "))
			y -= leading
		}
		l.buf.WriteString("ET\n")
		y -= leading / 2
	}

	footer := fmt.Sprintf("Page %d of %d", p, total)
	fw := helv.width(encode(footer)) * 8 / 1000
	l.textObject(helv, 8, (612-fw)/2, 40, footer)
	text = append(text, footer)
	return l.buf.Bytes(), strings.Join(text, "\n")
}

func (l *layout) textObject(f font, size, x, y float64, s string) {
	fmt.Fprintf(&l.buf, "BT\n/%s %s Tf\n%s %s Td\n", f.res, num(size), num(x), num(y))
	literal(&l.buf, encode(s))
	l.buf.WriteString(" Tj\nET\n")
}

// line draws one line of words in one of three styles real producers use.
func (l *layout) line(f font, size, y float64, words []string, last bool) {
	g := l.tg
	fmt.Fprintf(&l.buf, "1 0 0 1 %s %s Tm\n", num(marginLeft), num(y))
	space := float64(f.widths[0])
	switch g.r.IntN(3) {
	case 0: // literal spaces, sometimes widened with word spacing
		tw := 0.0
		if !last && g.r.IntN(2) == 0 {
			tw = 0.2 + g.r.Float64()
			fmt.Fprintf(&l.buf, "%s Tw\n", num(tw))
		}
		literal(&l.buf, encode(strings.Join(words, " ")))
		l.buf.WriteString(" Tj\n")
		if tw != 0 {
			l.buf.WriteString("0 Tw\n")
		}
	case 1: // no spaces: words separated by TJ offsets, justified
		var natural float64
		for _, w := range words {
			natural += f.width(encode(w))
		}
		gap := space
		if !last && len(words) > 1 {
			fill := (marginRight-marginLeft)*1000/size - natural
			gap = math.Min(math.Max(fill/float64(len(words)-1), space), 3*space)
		}
		l.buf.WriteByte('[')
		for i, w := range words {
			if i > 0 {
				fmt.Fprintf(&l.buf, " %s ", num(-gap))
			}
			b := encode(w)
			if len(b) > 3 && g.r.IntN(3) == 0 {
				// Pair kerning inside a word must not split it.
				k := 1 + g.r.IntN(len(b)-2)
				literal(&l.buf, b[:k])
				fmt.Fprintf(&l.buf, " %d ", 15+g.r.IntN(60))
				literal(&l.buf, b[k:])
			} else {
				literal(&l.buf, b)
			}
		}
		l.buf.WriteString("] TJ\n")
	default: // one Tj per word, each placed with Td
		for i, w := range words {
			b := encode(w)
			if i > 0 {
				prev := f.width(encode(words[i-1]))
				fmt.Fprintf(&l.buf, "%s 0 Td\n", num((prev+space*(0.9+0.4*g.r.Float64()))*size/1000))
			}
			literal(&l.buf, b)
			l.buf.WriteString(" Tj\n")
		}
	}
}

// wrap breaks words into lines no wider than width points.
func wrap(f font, size float64, words []string, width float64) [][]string {
	var lines [][]string
	var cur []string
	var curW float64
	space := float64(f.widths[0]) * size / 1000
	for _, w := range words {
		ww := f.width(encode(w)) * size / 1000
		if len(cur) > 0 && curW+space+ww > width {
			lines = append(lines, cur)
			cur, curW = nil, 0
		}
		if len(cur) > 0 {
			curW += space
		}
		cur = append(cur, w)
		curW += ww
	}
	if len(cur) > 0 {
		lines = append(lines, cur)
	}
	return lines
}
