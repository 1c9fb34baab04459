package pdfbounds

import (
	"bufio"
	"errors"
	"strconv"
)

// The lexer reads just enough PDF syntax to follow cross-reference
// sections: numbers, names, keywords, dictionaries and arrays. Strings
// are skipped; their contents never matter here.

type (
	keyword string
	name    string
	ref     struct{ num, gen int64 }
	dict    map[name]any
	array   []any
)

// maxToken bounds one token and maxDepth the nesting of one object: the
// sections read here hold short numbers and names a few levels deep.
const (
	maxToken = 4 << 10
	maxDepth = 64
)

var errSyntax = errors.New("unreadable syntax")

type lexer struct {
	r    *bufio.Reader
	back []any // tokens read ahead, last first
}

func isSpace(c byte) bool {
	switch c {
	case 0, '\t', '\n', '\f', '\r', ' ':
		return true
	}
	return false
}

func isDelim(c byte) bool {
	switch c {
	case '<', '>', '(', ')', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func (l *lexer) unread(tok any) { l.back = append(l.back, tok) }

// token returns the next token: an int64, a float64, a name, a keyword
// (including the delimiters << >> [ ]), or nil at the end of the input.
// Strings come back as the keyword "()".
func (l *lexer) token() (any, error) {
	if n := len(l.back); n > 0 {
		tok := l.back[n-1]
		l.back = l.back[:n-1]
		return tok, nil
	}
	c, err := l.skipSpace()
	if err != nil {
		return nil, nil // end of input
	}
	switch c {
	case '[', ']', '{', '}':
		return keyword(c), nil
	case '<':
		next, err := l.r.ReadByte()
		if err != nil {
			return nil, errSyntax
		}
		if next == '<' {
			return keyword("<<"), nil
		}
		l.r.UnreadByte()
		return keyword("()"), l.skipUntil('>')
	case '>':
		if next, err := l.r.ReadByte(); err != nil || next != '>' {
			return nil, errSyntax
		}
		return keyword(">>"), nil
	case '(':
		return keyword("()"), l.skipLiteral()
	case '/':
		word, err := l.word()
		return name(word), err
	case ')':
		return nil, errSyntax
	}
	l.r.UnreadByte()
	word, err := l.word()
	if err != nil {
		return nil, err
	}
	if n, err := strconv.ParseInt(word, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(word, 64); err == nil {
		return f, nil
	}
	return keyword(word), nil
}

// skipSpace skips white space and comments and returns the byte after.
func (l *lexer) skipSpace() (byte, error) {
	for {
		c, err := l.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if c == '%' {
			for c != '\n' && c != '\r' {
				if c, err = l.r.ReadByte(); err != nil {
					return 0, err
				}
			}
			continue
		}
		if !isSpace(c) {
			return c, nil
		}
	}
}

// word reads regular characters up to the next white space or delimiter.
func (l *lexer) word() (string, error) {
	var b []byte
	for {
		c, err := l.r.ReadByte()
		if err != nil {
			return string(b), nil
		}
		if isSpace(c) || isDelim(c) {
			l.r.UnreadByte()
			return string(b), nil
		}
		if len(b) >= maxToken {
			return "", errSyntax
		}
		b = append(b, c)
	}
}

func (l *lexer) skipUntil(end byte) error {
	for {
		c, err := l.r.ReadByte()
		if err != nil {
			return errSyntax
		}
		if c == end {
			return nil
		}
	}
}

// skipLiteral skips a (string), whose parentheses nest unless escaped.
func (l *lexer) skipLiteral() error {
	for depth := 1; depth > 0; {
		c, err := l.r.ReadByte()
		if err != nil {
			return errSyntax
		}
		switch c {
		case '\\':
			if _, err := l.r.ReadByte(); err != nil {
				return errSyntax
			}
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return nil
}

// object reads one object: a dict, an array, a reference (num gen R) or
// a single token.
func (l *lexer) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errSyntax
	}
	tok, err := l.token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case keyword("<<"):
		d := dict{}
		for {
			key, err := l.token()
			if err != nil {
				return nil, err
			}
			if key == keyword(">>") {
				return d, nil
			}
			k, ok := key.(name)
			if !ok {
				return nil, errSyntax
			}
			if d[k], err = l.object(depth + 1); err != nil {
				return nil, err
			}
		}
	case keyword("["):
		var a array
		for {
			next, err := l.token()
			if err != nil || next == nil {
				return nil, errSyntax
			}
			if next == keyword("]") {
				return a, nil
			}
			l.unread(next)
			v, err := l.object(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case nil, keyword(">>"), keyword("]"):
		return nil, errSyntax
	}
	num, ok := tok.(int64)
	if !ok {
		return tok, nil
	}
	gen, err := l.token()
	if err != nil {
		return nil, err
	}
	if g, ok := gen.(int64); ok {
		r, err := l.token()
		if err != nil {
			return nil, err
		}
		if r == keyword("R") {
			return ref{num, g}, nil
		}
		l.unread(r)
	}
	l.unread(gen)
	return num, nil
}
