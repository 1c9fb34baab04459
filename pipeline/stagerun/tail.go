package stagerun

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// reasonBytes bounds the part of stderr or of an error body that becomes
// a failure's recorded reason.
const reasonBytes = 2048

// tailBuffer keeps the last max bytes written to it, so a stage that
// writes megabytes of logs costs a fixed amount of memory.
type tailBuffer struct {
	max       int
	buf       []byte
	truncated bool
}

func newTail(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		t.truncated = true
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.truncated = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the kept tail as whole lines: when older output was
// dropped, the first (partial) line goes too, unless it is the only one.
func (t *tailBuffer) String() string {
	return lastLines(t.buf, t.truncated)
}

// tailOf returns the last lines of b within reasonBytes.
func tailOf(b []byte) string {
	if len(b) <= reasonBytes {
		return lastLines(b, false)
	}
	return lastLines(b[len(b)-reasonBytes:], true)
}

func lastLines(b []byte, truncated bool) string {
	b = bytes.TrimRight(b, " \t\r\n")
	if truncated {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(strings.TrimSpace(string(b)), "\uFFFD")
}
