package plaintext

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"github.com/docpipe/docpipe/pipeline/sniff"
)

// Decode converts text bytes to clean UTF-8: the encoding is guessed by
// sniff.DetectEncoding over all of b, a byte-order mark is dropped, invalid
// sequences become U+FFFD, CRLF and CR become LF, NULs and other control
// characters (except tab, newline and form feed) are removed. It returns
// the encoding's name.
func Decode(b []byte) (string, string) {
	enc, _ := sniff.DetectEncoding(b)
	out, err := decoder(enc.Name).Bytes(b[enc.BOMLen:])
	if err != nil {
		// The decoders replace rather than fail; keep going with what
		// a lenient UTF-8 reading gives.
		out = []byte(strings.ToValidUTF8(string(b[enc.BOMLen:]), "\uFFFD"))
	}
	return Clean(string(out)), enc.Name
}

// decoder returns the decoder for an encoding DetectEncoding names.
func decoder(name string) *encoding.Decoder {
	switch name {
	case sniff.EncodingUTF16LE:
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewDecoder()
	case sniff.EncodingUTF16BE:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder()
	case sniff.EncodingWindows1252:
		return charmap.Windows1252.NewDecoder()
	}
	return unicode.UTF8.NewDecoder() // replaces invalid bytes with U+FFFD
}

// Clean normalises decoded text: LF newlines, no NULs or stray controls,
// valid UTF-8.
func Clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if clean(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\r':
			sb.WriteByte('\n')
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case r == '\n' || r == '\t' || r == '\f':
			sb.WriteRune(r)
		case r < 0x20 || r == 0x7F || (r >= 0x80 && r <= 0x9F) || r == '\uFEFF':
			// NUL, other controls and stray BOMs carry no text
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// clean reports whether Clean would leave s unchanged (the common case,
// checked without building a copy).
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\r' || c == 0x7F || (c < 0x20 && c != '\n' && c != '\t' && c != '\f'):
			return false
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r >= 0x80 && r <= 0x9F) || r == '\uFEFF' {
				return false
			}
			i += size - 1
		}
	}
	return true
}
