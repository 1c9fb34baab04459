package sniff

import (
	"bytes"
	"regexp"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Encoding names reported in Info.Encoding (WHATWG labels, so that
// golang.org/x/net/html/charset.Lookup understands them).
const (
	EncodingUTF8        = "utf-8"
	EncodingUTF16LE     = "utf-16le"
	EncodingUTF16BE     = "utf-16be"
	EncodingWindows1252 = "windows-1252"
)

// TextEncoding is the guessed encoding of text bytes.
type TextEncoding struct {
	Name   string // one of the Encoding* constants
	BOMLen int    // length of the byte-order mark the bytes start with, 0 if none
}

// maxBinaryRatio is the share of control or undefined characters above which
// bytes are binary data rather than text. Real text has tabs and newlines but
// almost no other controls; random bytes have about 13%.
const maxBinaryRatio = 0.01

// DetectEncoding guesses how text bytes are encoded; ok is false when they
// do not look like text at all. The rule, in order:
//
//  1. a byte-order mark decides (UTF-8, UTF-16 LE, UTF-16 BE);
//  2. without one, NULs in every other byte (the high byte of ASCII
//     characters) mean BOM-less UTF-16, LE or BE by their position;
//  3. valid UTF-8 is UTF-8, and so is "mostly valid" UTF-8: multibyte
//     sequences present and at most one invalid byte per four of them (a
//     stray bad byte in a UTF-8 file is replaced, not a reason to misread
//     every accented letter);
//  4. anything else is Windows-1252 (a superset of Latin-1's printable
//     range);
//
// and in every case at most 1% of the characters may be controls (other
// than tab, newline, carriage return, form feed) or bytes Windows-1252 leaves
// undefined. b may be cut anywhere: a partial character at its end is
// ignored.
func DetectEncoding(b []byte) (TextEncoding, bool) {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		enc := TextEncoding{Name: EncodingUTF8, BOMLen: 3}
		return enc, utf8Text(b[3:])
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE, 0, 0}):
		return TextEncoding{}, false // UTF-32 LE: not supported
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return TextEncoding{Name: EncodingUTF16LE, BOMLen: 2}, utf16Text(b[2:], false)
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return TextEncoding{Name: EncodingUTF16BE, BOMLen: 2}, utf16Text(b[2:], true)
	}
	if le, be := nulPattern(b); le || be {
		name := EncodingUTF16LE
		if be {
			name = EncodingUTF16BE
		}
		return TextEncoding{Name: name}, utf16Text(b, be)
	}
	b = b[:CompleteRunes(b)]
	if utf8.Valid(b) || mostlyUTF8(b) {
		return TextEncoding{Name: EncodingUTF8}, utf8Text(b)
	}
	return TextEncoding{Name: EncodingWindows1252}, cp1252Text(b)
}

// nulPattern reports BOM-less UTF-16: at least 40% of the odd (LE) or even
// (BE) bytes are NUL while the other half has next to none.
func nulPattern(b []byte) (le, be bool) {
	n := min(len(b), 8192) &^ 1
	if n < 4 {
		return false, false
	}
	var even, odd int
	for i := 0; i < n; i += 2 {
		if b[i] == 0 {
			even++
		}
		if b[i+1] == 0 {
			odd++
		}
	}
	pairs := n / 2
	le = odd*10 >= pairs*4 && even*20 <= pairs
	be = even*10 >= pairs*4 && odd*20 <= pairs
	return le, be
}

// CompleteRunes returns the length of b without a character cut off at its
// end (one whose first bytes are there and the rest not): a reader of
// text in chunks keeps those bytes for the next chunk.
func CompleteRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

func mostlyUTF8(b []byte) bool {
	var multi, invalid int
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size == 1:
			invalid++
		case size > 1:
			multi++
		}
		b = b[size:]
	}
	return multi > 0 && invalid*4 <= multi
}

func isBinaryRune(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == '\f':
		return false
	case r < 0x20 || r == 0x7F:
		return true
	case r >= 0x80 && r <= 0x9F: // C1 controls
		return true
	}
	return false
}

// ratioSample bounds how much of a large file the control-character ratio
// is measured on: a text file shows what it is in its first megabyte.
const ratioSample = 1 << 20

func textRatioOK(binary, total int) bool {
	return total > 0 && float64(binary) <= maxBinaryRatio*float64(total)
}

func utf8Text(b []byte) bool {
	b = b[:CompleteRunes(b[:min(len(b), ratioSample)])]
	var binary, total int
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		total++
		if isBinaryRune(r) {
			binary++
		}
	}
	return total == 0 || textRatioOK(binary, total)
}

func utf16Text(b []byte, bigEndian bool) bool {
	n := min(len(b), ratioSample) &^ 1
	u := make([]uint16, 0, n/2)
	for i := 0; i < n; i += 2 {
		if bigEndian {
			u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			u = append(u, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	// A surrogate pair cut at the end is not an error.
	if len(u) > 0 && utf16.IsSurrogate(rune(u[len(u)-1])) {
		u = u[:len(u)-1]
	}
	var binary, total int
	for _, r := range utf16.Decode(u) {
		total++
		if isBinaryRune(r) || r == utf8.RuneError {
			binary++
		}
	}
	return total == 0 || textRatioOK(binary, total)
}

func cp1252Text(b []byte) bool {
	b = b[:min(len(b), ratioSample)]
	var binary int
	for _, c := range b {
		switch {
		case c == 0x81 || c == 0x8D || c == 0x8F || c == 0x90 || c == 0x9D: // undefined in Windows-1252
			binary++
		case c < 0x80 && isBinaryRune(rune(c)):
			binary++
		}
	}
	return textRatioOK(binary, len(b))
}

// decodeHead returns text bytes as UTF-8 for the markup heuristics. It is a
// cheap approximation: only the ASCII subset matters to them.
func decodeHead(b []byte, enc TextEncoding) []byte {
	b = b[enc.BOMLen:]
	switch enc.Name {
	case EncodingUTF16LE, EncodingUTF16BE:
		out := make([]byte, 0, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			hi, lo := b[i+1], b[i]
			if enc.Name == EncodingUTF16BE {
				hi, lo = b[i], b[i+1]
			}
			if hi == 0 && lo < 0x80 {
				out = append(out, lo)
			} else {
				out = append(out, '?')
			}
		}
		return out
	}
	return b
}

// htmlStart is compiled on first use, like the Markdown patterns.
var htmlStart = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^<(!doctype\s+html|html|head|body|title|meta|link|style|script)[\s>/]`)
})

// looksLikeHTML: after whitespace, comments and an XML declaration the text
// starts with an HTML doctype or one of the tags that only open an HTML
// document (html, head, body, title, meta, link, style, script).
func looksLikeHTML(text []byte) bool {
	t := bytes.TrimLeft(text, " \t\r\n\f")
	for range 16 { // skip at most a few leading comments and declarations
		switch {
		case bytes.HasPrefix(t, []byte("<!--")):
			end := bytes.Index(t, []byte("-->"))
			if end < 0 {
				return false
			}
			t = bytes.TrimLeft(t[end+3:], " \t\r\n\f")
		case bytes.HasPrefix(t, []byte("<?xml")):
			end := bytes.Index(t, []byte("?>"))
			if end < 0 {
				return false
			}
			t = bytes.TrimLeft(t[end+2:], " \t\r\n\f")
		default:
			return htmlStart().Match(t)
		}
	}
	return false
}

// markdownSyntax holds the patterns looksLikeMarkdown scores. They are
// compiled on first use, not at start-up: commands that never sniff a
// file should not pay for them.
type markdownSyntax struct {
	atxHeading, setext, fence, tableDelim, listItem *regexp.Regexp
	blockquote, inlineLink, refLinkDef, inlineStyle *regexp.Regexp
}

var mdSyntax = sync.OnceValue(func() *markdownSyntax {
	return &markdownSyntax{
		atxHeading:  regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+\S`),
		setext:      regexp.MustCompile(`^ {0,3}(=+|-{2,})[ \t]*$`),
		fence:       regexp.MustCompile("^ {0,3}(```|~~~)"),
		tableDelim:  regexp.MustCompile(`^ {0,3}\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$`),
		listItem:    regexp.MustCompile(`^ {0,3}([-*+]|\d{1,9}[.)])[ \t]+\S`),
		blockquote:  regexp.MustCompile(`^ {0,3}>[ \t]?\S`),
		inlineLink:  regexp.MustCompile(`!?\[[^\]\n]+\]\([^)\s]+[^)\n]*\)`),
		refLinkDef:  regexp.MustCompile(`^ {0,3}\[[^\]]+\]:[ \t]*\S`),
		inlineStyle: regexp.MustCompile("(\\*\\*[^*\\n]+\\*\\*|__[^_\\n]+__|`[^`\\n]+`)"),
	}
})

// looksLikeMarkdown scores Markdown syntax in the head of a text file.
//
// Structural signals (2 points each): an ATX heading ("# Title"), a setext
// underline below a text line, a code fence, a GFM table delimiter row.
// Minor signals (1 point each, at most 3 of each kind): list items,
// blockquote lines, inline links or images, reference link definitions,
// **strong**/__strong__/`code` spans.
//
// The text is Markdown when it has at least one structural signal and a
// score of 3 or more, or when its first non-blank line is an ATX heading
// (plain text does not start with "# "). Lists alone never make Markdown:
// numbered and dashed lists are common in plain letters.
func looksLikeMarkdown(text []byte) bool {
	md := mdSyntax()
	lines := bytes.Split(text, []byte("\n"))
	if len(lines) > 1 {
		lines = lines[:len(lines)-1] // the last line may be cut short
	}
	var structural, score int
	minor := map[string]int{}
	addMinor := func(kind string) {
		if minor[kind] < 3 {
			minor[kind]++
			score++
		}
	}
	firstSeen := false
	prevText := false
	inFence := false
	for _, raw := range lines {
		line := bytes.TrimRight(raw, "\r")
		blank := len(bytes.TrimSpace(line)) == 0
		// Every line pattern but the table row starts, after at most three
		// spaces, with a byte of its own: lines of prose start with none of
		// them and skip the regular expressions.
		lead := leadByte(line)
		setext := (lead == '=' || lead == '-') && md.setext.Match(line)
		if !firstSeen && !blank {
			firstSeen = true
			if lead == '#' && md.atxHeading.Match(line) {
				return true
			}
		}
		switch {
		case (lead == '`' || lead == '~') && md.fence.Match(line):
			structural++
			score += 2
			inFence = !inFence
		case inFence:
		case lead == '#' && md.atxHeading.Match(line):
			structural++
			score += 2
		case prevText && setext:
			structural++
			score += 2
		case bytes.Contains(line, []byte("---")) && bytes.IndexByte(line, '|') >= 0 && md.tableDelim.Match(line):
			structural++
			score += 2
		case (lead == '-' || lead == '*' || lead == '+' || '0' <= lead && lead <= '9') && md.listItem.Match(line):
			addMinor("list")
		case lead == '>' && md.blockquote.Match(line):
			addMinor("quote")
		case lead == '[' && md.refLinkDef.Match(line):
			addMinor("refdef")
		}
		if !inFence {
			if bytes.Contains(line, []byte("](")) && md.inlineLink.Match(line) {
				addMinor("link")
			}
			if (bytes.Contains(line, []byte("**")) || bytes.Contains(line, []byte("__")) || bytes.IndexByte(line, '`') >= 0) && md.inlineStyle.Match(line) {
				addMinor("style")
			}
		}
		prevText = !blank && !setext
	}
	return structural > 0 && score >= 3
}

// leadByte is line's first byte after at most three spaces, where every
// Markdown line pattern begins; 0 for a line of spaces.
func leadByte(line []byte) byte {
	for i := 0; i < len(line) && i <= 3; i++ {
		if line[i] != ' ' {
			return line[i]
		}
	}
	return 0
}
