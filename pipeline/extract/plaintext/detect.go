package plaintext

import (
	"context"
	"io"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/sniff"
)

// nulSample is how much of the head sniff.DetectEncoding looks at for the
// NUL pattern of BOM-less UTF-16 (nulPattern in pipeline/sniff/text.go).
const nulSample = 8192

// detectEncoding reads r (the whole file) once and returns the encoding
// sniff.DetectEncoding(all of it) names, holding one chunk at a time. A
// byte-order mark or the NUL pattern of the head decides at once; else the
// file is UTF-8 when its invalid bytes are none or at most one per four
// multibyte characters, counted over all of it, and Windows-1252
// otherwise. Whether the bytes look like text is sniff's concern, not
// this one's (Decode ignores it too). valid reports that the file is UTF-8
// without a BOM, all of it valid: decoding would not change a byte.
func detectEncoding(ctx context.Context, r io.Reader, chunk int) (enc sniff.TextEncoding, valid bool, err error) {
	buf := make([]byte, max(chunk+utf8.UTFMax, nulSample))
	n, err := io.ReadFull(r, buf[:nulSample])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return sniff.TextEncoding{}, false, err
	}
	head := buf[:n]
	// DetectEncoding on the head alone decides what only the head decides
	// (a BOM, the NUL pattern); its UTF-8 verdict needs the whole file.
	enc, _ = sniff.DetectEncoding(head)
	if enc.BOMLen > 0 || (enc.Name != sniff.EncodingUTF8 && enc.Name != sniff.EncodingWindows1252) {
		return enc, false, nil
	}
	var u utf8Count
	data := head
	eof := n < nulSample
	for {
		if err := ctx.Err(); err != nil {
			return sniff.TextEncoding{}, false, err
		}
		end := sniff.CompleteRunes(data)
		u.add(data[:end])
		if eof {
			// A partial character at the end is ignored, as
			// DetectEncoding ignores it (the decoder does not).
			u.cut = end < len(data)
			break
		}
		keep := copy(buf, data[end:])
		n, err := io.ReadFull(r, buf[keep:keep+chunk])
		switch err {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			eof = true
		default:
			return sniff.TextEncoding{}, false, err
		}
		data = buf[:keep+n]
	}
	if u.invalid == 0 || u.multi > 0 && u.invalid*4 <= u.multi {
		return sniff.TextEncoding{Name: sniff.EncodingUTF8}, u.invalid == 0 && !u.cut, nil
	}
	return sniff.TextEncoding{Name: sniff.EncodingWindows1252}, false, nil
}

// utf8Count counts what sniff's mostlyUTF8 counts: invalid bytes and
// multibyte characters.
type utf8Count struct {
	invalid, multi int
	cut            bool // the input ends in a partial character
}

// add counts b, which ends on a character boundary of the whole input.
func (u *utf8Count) add(b []byte) {
	if utf8.Valid(b) {
		// Every byte from 0xC0 up starts a multibyte character.
		for _, c := range b {
			if c >= 0xC0 {
				u.multi++
			}
		}
		return
	}
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			u.invalid++
		case size > 1:
			u.multi++
		}
		i += size
	}
}
