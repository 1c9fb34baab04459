package ocr

import (
	"bytes"
	"io"
	"testing"
)

// io.Copy, as exec uses to collect a tool's output, stays within the cap:
// a tool that writes hundreds of MB of warnings costs a few KB here.
func TestCappedBoundsCopy(t *testing.T) {
	c := &capped{max: 1 << 10}
	n, err := io.Copy(c, io.LimitReader(neverEnding('x'), 8<<20))
	if err != nil || n != 8<<20 {
		t.Fatalf("copied %d, %v", n, err)
	}
	if len(c.String()) != 1<<10 || !c.over {
		t.Fatalf("kept %d bytes (over=%v), want the first %d", len(c.String()), c.over, 1<<10)
	}
	if !bytes.Equal([]byte(c.String()), bytes.Repeat([]byte("x"), 1<<10)) {
		t.Fatal("kept the wrong bytes")
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
