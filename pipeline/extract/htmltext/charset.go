package htmltext

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"

	"github.com/docpipe/docpipe/pipeline/sniff"
)

// source is a page, in memory or in a file, and how to decode it.
type source struct {
	mem  []byte
	file *os.File // if set, the page is read from it, not from mem
	size int64
	bom  int               // bytes of byte-order mark to skip
	enc  encoding.Encoding // nil: UTF-8, read as it is
}

// detect decides the page's encoding as a browser would: byte-order mark,
// then BOM-less UTF-16 (which browsers do not guess) recognised by its
// NULs, then a <meta> declaration in the first 1024 bytes, then UTF-8 if
// the whole page is valid UTF-8, else Windows-1252. The first bytes say
// nothing of a page whose non-ASCII text comes later, so validity is
// checked over all of it.
func (s *source) detect() error {
	head, err := s.head(8192)
	if err != nil {
		return err
	}
	enc, name, certain := charset.DetermineEncoding(head, "")
	u16 := utf16(head)
	switch {
	case certain: // a byte-order mark: skipped, as it is not text
		s.bom = 2
		if name == "utf-8" {
			s.bom = 3
		}
	case u16 != "":
		enc, name = charset.Lookup(u16)
	default:
		if e, n := declared(head); e != nil {
			enc, name = e, n
			break
		}
		valid, err := s.validUTF8()
		if err != nil {
			return err
		}
		if valid {
			return nil
		}
		enc, name = charset.Lookup("windows-1252")
	}
	if name != "utf-8" {
		s.enc = enc
	}
	return nil
}

// head returns the page's first n bytes (fewer if it is shorter).
func (s *source) head(n int) ([]byte, error) {
	if s.file == nil {
		return s.mem[:min(n, len(s.mem))], nil
	}
	b := make([]byte, min(int64(n), s.size))
	m, err := s.file.ReadAt(b, 0)
	if err == io.EOF {
		err = nil
	}
	return b[:m], err
}

// validUTF8 reports whether the whole page is UTF-8, ignoring a character
// cut off at its end.
func (s *source) validUTF8() (bool, error) {
	if s.file == nil {
		return utf8.Valid(s.mem[:sniff.CompleteRunes(s.mem)]), nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	buf := make([]byte, 64<<10)
	carry := 0 // bytes of a character split between reads
	for {
		n, err := io.ReadFull(s.file, buf[carry:])
		n += carry
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return utf8.Valid(buf[:sniff.CompleteRunes(buf[:n])]), nil
		}
		if err != nil {
			return false, err
		}
		whole := buf[:sniff.CompleteRunes(buf[:n])]
		if !utf8.Valid(whole) {
			return false, nil
		}
		carry = copy(buf, buf[len(whole):n])
	}
}

// utf16 names the BOM-less UTF-16 that sniff recognises by the NULs of
// the page's first 8 KB, or returns "".
func utf16(head []byte) string {
	te, ok := sniff.DetectEncoding(head)
	if ok && te.BOMLen == 0 && (te.Name == sniff.EncodingUTF16LE || te.Name == sniff.EncodingUTF16BE) {
		return te.Name
	}
	return ""
}

// declared is the encoding a <meta charset> or <meta http-equiv> in the
// first 1024 bytes declares, following the HTML prescan (as x/net/html's
// charset package does, which does not tell a declared Windows-1252 from
// its default).
func declared(head []byte) (encoding.Encoding, string) {
	if len(head) > 1024 {
		head = head[:1024]
	}
	z := html.NewTokenizer(bytes.NewReader(head))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil, ""
		case html.StartTagToken, html.SelfClosingTagToken:
			tag, hasAttr := z.TagName()
			if string(tag) != "meta" {
				continue
			}
			var (
				enc        encoding.Encoding
				name       string
				pragma     bool
				needPragma = -1 // unknown; 1: content= names it; 0: charset= does
				seen       = map[string]bool{}
			)
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				key := string(k)
				if seen[key] {
					continue
				}
				seen[key] = true
				val := lowerASCII(v)
				switch key {
				case "http-equiv":
					pragma = pragma || val == "content-type"
				case "content":
					if enc == nil {
						if cs := contentCharset(val); cs != "" {
							if enc, name = charset.Lookup(cs); enc != nil {
								needPragma = 1
							}
						}
					}
				case "charset":
					enc, name = charset.Lookup(val)
					needPragma = 0
				}
			}
			if needPragma == -1 || needPragma == 1 && !pragma {
				continue
			}
			if strings.HasPrefix(name, "utf-16") { // a page that can declare it is not UTF-16
				return encoding.Nop, "utf-8"
			}
			if enc != nil {
				return enc, name
			}
		}
	}
}

func lowerASCII(b []byte) string {
	out := []byte(string(b))
	for i, c := range out {
		if 'A' <= c && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return string(out)
}

// contentCharset is the charset named in a <meta content> value, as the
// HTML "extracting a character encoding from a meta element" algorithm
// reads it.
func contentCharset(s string) string {
	for {
		i := strings.Index(s, "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], " \t\n\f\r")
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], " \t\n\f\r")
		if s == "" {
			return ""
		}
		if q := s[0]; q == '"' || q == '\'' {
			s = s[1:]
			if j := strings.IndexByte(s, q); j >= 0 {
				return s[:j]
			}
			return ""
		}
		if j := strings.IndexAny(s, "; \t\n\f\r"); j >= 0 {
			s = s[:j]
		}
		return s
	}
}

// reader opens the page, decoded to UTF-8, from its start.
func (s *source) reader() (io.Reader, error) {
	var r io.Reader
	if s.file == nil {
		r = bytes.NewReader(s.mem[s.bom:])
	} else {
		if _, err := s.file.Seek(int64(s.bom), io.SeekStart); err != nil {
			return nil, err
		}
		r = bufio.NewReaderSize(s.file, 64<<10)
	}
	if s.enc != nil {
		r = s.enc.NewDecoder().Reader(r)
	}
	return r, nil
}

// decoded returns the page in UTF-8 for the tree parser, copying it only
// when decoding changes it.
func (s *source) decoded() []byte {
	b := s.mem[s.bom:]
	if s.enc == nil || (s.enc == charset1252() && ascii(b)) {
		return b
	}
	out, err := s.enc.NewDecoder().Bytes(b)
	if err != nil {
		return b
	}
	return out
}

func charset1252() encoding.Encoding {
	e, _ := charset.Lookup("windows-1252")
	return e
}

// ascii reports whether b is 7-bit, which Windows-1252 leaves as it is.
func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
