package pdftext

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/ledongthuc/pdf"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// A content stream is read here rather than with the library's Interpret,
// which holds every operand until an operator comes, a string or array of
// any size, and nests arrays by recursion: a few hundred KB of compressed
// instructions could take gigabytes or overflow the stack. This reader
// streams the decompressed bytes through a budget and keeps memory to one
// operator's operands, each bounded.
const (
	// maxOperands bounds the values (nested ones included) waiting for
	// an operator; real operators take at most a few hundred (a TJ array).
	// Past it the waiting values are dropped, as garbage.
	maxOperands = 1 << 16
	// maxStringBytes bounds one string operand.
	maxStringBytes = 1 << 20
	// maxNesting bounds arrays and dictionaries within one another.
	maxNesting = 32
	// streamOpenCost is what opening a stream counts against the page's
	// budget besides its bytes: a decompressor's state is tens of KB, so
	// a small form drawn a million times costs more than its bytes say.
	streamOpenCost = 16 << 10
)

type operandKind uint8

const (
	opNull operandKind = iota
	opNumber
	opName
	opString
	opArray
	opDict // read past; its contents are not kept
)

// operand is one value given to a content-stream operator.
type operand struct {
	kind operandKind
	num  float64
	str  string // a name's or a string's bytes
	arr  []operand
}

// budget counts the decompressed bytes a page's content streams may still
// take: the whole page, and the stream being read.
type budget struct {
	page, stream           int64
	pageLimit, streamLimit int64
}

func newBudget(pageLimit, streamLimit int64) *budget {
	return &budget{page: pageLimit, pageLimit: pageLimit, streamLimit: streamLimit}
}

func (b *budget) startStream() {
	b.stream = b.streamLimit
	b.page -= streamOpenCost
}

// meteredReader reads a stream while the budget allows, and fails with a
// TooLargeError past it.
type meteredReader struct {
	r io.Reader
	b *budget
}

func (m meteredReader) Read(p []byte) (int, error) {
	left := min(m.b.page, m.b.stream)
	if left <= 0 {
		// Only a byte more proves the stream is over: one that ends
		// exactly at the limit is within it.
		var one [1]byte
		if n, _ := m.r.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		if m.b.page <= 0 {
			return 0, &steperr.TooLargeError{Reason: fmt.Sprintf("a PDF page's content is over %d MiB decompressed", m.b.pageLimit>>20)}
		}
		return 0, &steperr.TooLargeError{Reason: fmt.Sprintf("a PDF content stream is over %d MiB decompressed", m.b.streamLimit>>20)}
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := m.r.Read(p)
	m.b.page -= int64(n)
	m.b.stream -= int64(n)
	return n, err
}

// contentReader returns the decompressed content of a stream, or of an
// array of streams read one after another as one (a token never spans two
// of them, so a line break goes between).
func contentReader(strm pdf.Value, b *budget) io.Reader {
	if strm.Kind() != pdf.Array {
		b.startStream()
		return meteredReader{strm.Reader(), b}
	}
	return &streamsReader{strms: strm, b: b}
}

type streamsReader struct {
	strms pdf.Value
	next  int
	cur   io.Reader
	b     *budget
}

func (s *streamsReader) Read(p []byte) (int, error) {
	for {
		if s.cur == nil {
			if s.next >= s.strms.Len() {
				return 0, io.EOF
			}
			strm := s.strms.Index(s.next)
			s.next++
			if strm.Kind() != pdf.Stream {
				continue
			}
			s.b.startStream()
			s.cur = meteredReader{strm.Reader(), s.b}
			if len(p) > 0 && s.next > 1 {
				p[0] = '\n'
				return 1, nil
			}
		}
		n, err := s.cur.Read(p)
		if err == io.EOF {
			s.cur = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

// scanner splits a content stream into operands and operators.
type scanner struct {
	r        *bufio.Reader
	operands []operand
	count    int // values in operands, nested ones included
	tok      []byte
	err      error
}

// reset makes s read r from its start, keeping its buffers.
func (s *scanner) reset(r io.Reader) {
	if s.r == nil {
		s.r = bufio.NewReaderSize(r, 32<<10)
	} else {
		s.r.Reset(r)
	}
	s.err = nil
}

// next returns the next operator, with its operands in s.operands, or
// ok false at the end of the stream (s.err tells a failure from the end).
func (s *scanner) next() (op string, ok bool) {
	s.operands = s.operands[:0]
	s.count = 0
	for {
		v, keyword, ok := s.value(0)
		if !ok {
			return "", false
		}
		if keyword != "" {
			if keyword == "ID" {
				s.skipInlineImage()
			}
			return keyword, true
		}
		if s.count >= maxOperands {
			s.operands = s.operands[:0]
			s.count = 0
		}
		s.count++
		s.operands = append(s.operands, v)
	}
}

func (s *scanner) fail(err error) {
	if s.err == nil && err != io.EOF {
		s.err = err
	}
}

func (s *scanner) readByte() (byte, bool) {
	c, err := s.r.ReadByte()
	if err != nil {
		s.fail(err)
		return 0, false
	}
	return c, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// value reads one value; a bare word other than true, false or null
// comes back as keyword. Closing brackets come back as keywords "]" and
// ">>", which only an enclosing array or dictionary expects.
func (s *scanner) value(depth int) (v operand, keyword string, ok bool) {
	var c byte
	for {
		if c, ok = s.readByte(); !ok {
			return v, "", false
		}
		if c == '%' {
			for c != '\n' && c != '\r' {
				if c, ok = s.readByte(); !ok {
					return v, "", false
				}
			}
			continue
		}
		if !isSpace(c) {
			break
		}
	}
	switch c {
	case '(':
		return s.literalString()
	case '/':
		s.word()
		return operand{kind: opName, str: decodeName(s.tok)}, "", s.err == nil
	case '[':
		if depth >= maxNesting {
			return v, "[", true
		}
		return s.array(depth)
	case ']':
		return v, "]", true
	case '<':
		if b, err := s.r.Peek(1); err == nil && b[0] == '<' {
			s.r.ReadByte()
			if depth >= maxNesting {
				return v, "<<", true
			}
			return s.dict(depth)
		}
		return s.hexString()
	case '>':
		if b, err := s.r.Peek(1); err == nil && b[0] == '>' {
			s.r.ReadByte()
			return v, ">>", true
		}
		return v, "", true // stray: nothing
	case ')', '{', '}':
		return v, "", true
	}
	s.r.UnreadByte()
	s.word()
	w := s.tok
	if len(w) == 0 {
		return v, "", s.err == nil
	}
	if c := w[0]; c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9' {
		f, _ := strconv.ParseFloat(string(w), 64)
		return operand{kind: opNumber, num: f}, "", true
	}
	switch string(w) {
	case "true", "false", "null":
		return operand{kind: opNull}, "", true
	}
	return v, string(w), true
}

// word reads a regular token into s.tok, bounded like a string.
func (s *scanner) word() {
	s.tok = s.tok[:0]
	for {
		b, err := s.r.Peek(1)
		if err != nil {
			s.fail(err)
			return
		}
		if isSpace(b[0]) || isDelim(b[0]) {
			return
		}
		s.r.ReadByte()
		if len(s.tok) < 256 {
			s.tok = append(s.tok, b[0])
		}
	}
}

func decodeName(b []byte) string {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '#' && i+2 < len(b) {
			if x, err := strconv.ParseUint(string(b[i+1:i+3]), 16, 8); err == nil {
				out = append(out, byte(x))
				i += 2
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}

func (s *scanner) appendStringByte(c byte) bool {
	if len(s.tok) >= maxStringBytes {
		s.fail(&steperr.TooLargeError{Reason: fmt.Sprintf("a PDF content stream holds a string over %d KiB", maxStringBytes>>10)})
		return false
	}
	s.tok = append(s.tok, c)
	return true
}

func (s *scanner) literalString() (operand, string, bool) {
	s.tok = s.tok[:0]
	nest := 0
	for {
		c, ok := s.readByte()
		if !ok {
			break
		}
		switch c {
		case '(':
			nest++
		case ')':
			if nest == 0 {
				return operand{kind: opString, str: string(s.tok)}, "", true
			}
			nest--
		case '\\':
			if c, ok = s.readByte(); !ok {
				return operand{}, "", false
			}
			switch c {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if b, err := s.r.Peek(1); err == nil && b[0] == '\n' {
					s.r.ReadByte()
				}
				continue
			case '\n':
				continue
			default:
				if c >= '0' && c <= '7' {
					x := int(c - '0')
					for range 2 {
						b, err := s.r.Peek(1)
						if err != nil || b[0] < '0' || b[0] > '7' {
							break
						}
						s.r.ReadByte()
						x = x*8 + int(b[0]-'0')
					}
					c = byte(x)
				}
			}
		}
		if !s.appendStringByte(c) {
			return operand{}, "", false
		}
	}
	// Unterminated at the end of the stream: keep what was read.
	return operand{kind: opString, str: string(s.tok)}, "", s.err == nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func (s *scanner) hexString() (operand, string, bool) {
	s.tok = s.tok[:0]
	var hi byte
	half := false
	for {
		c, ok := s.readByte()
		if !ok || c == '>' {
			break
		}
		d, ok := unhex(c)
		if !ok {
			continue
		}
		if !half {
			hi, half = d, true
			continue
		}
		half = false
		if !s.appendStringByte(hi<<4 | d) {
			return operand{}, "", false
		}
	}
	if half && !s.appendStringByte(hi<<4) {
		return operand{}, "", false
	}
	return operand{kind: opString, str: string(s.tok)}, "", s.err == nil
}

func (s *scanner) array(depth int) (operand, string, bool) {
	var elems []operand
	for {
		v, kw, ok := s.value(depth + 1)
		switch {
		case !ok:
			return operand{kind: opArray, arr: elems}, "", false
		case kw == "]":
			return operand{kind: opArray, arr: elems}, "", true
		case kw == "[" || kw == "<<":
			s.skipNested()
			continue
		case kw != "":
			continue // an operator inside an array is malformed: ignored
		}
		if s.count < maxOperands { // past the bound, values are dropped

			s.count++
			elems = append(elems, v)
		}
	}
}

// dict reads a dictionary (a marked-content property list, an inline
// image's parameters) and keeps nothing of it: no text operator needs it.
func (s *scanner) dict(depth int) (operand, string, bool) {
	for {
		_, kw, ok := s.value(depth + 1)
		if !ok {
			return operand{}, "", false
		}
		switch kw {
		case ">>":
			return operand{kind: opDict}, "", true
		case "[", "<<":
			s.skipNested()
		}
	}
}

// skipNested reads past an array or dictionary nested deeper than
// maxNesting, counting brackets instead of recursing.
func (s *scanner) skipNested() {
	for open := 1; open > 0; {
		_, kw, ok := s.value(maxNesting)
		if !ok {
			return
		}
		switch kw {
		case "[", "<<":
			open++
		case "]", ">>":
			open--
		}
	}
}

// skipInlineImage reads past an inline image's data, which runs from
// the byte after ID to "EI" between white space.
func (s *scanner) skipInlineImage() {
	if _, ok := s.readByte(); !ok { // the one white-space byte after ID
		return
	}
	var prev2, prev1 byte = ' ', ' '
	for {
		c, ok := s.readByte()
		if !ok {
			return
		}
		if isSpace(prev2) && prev1 == 'E' && c == 'I' {
			b, err := s.r.Peek(1)
			if err != nil || isSpace(b[0]) || isDelim(b[0]) {
				return
			}
		}
		prev2, prev1 = prev1, c
	}
}
