package plaintext

import (
	"context"
	"errors"
	"io"
	"os"
	"unicode/utf8"

	"golang.org/x/text/transform"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/sniff"
)

// TextReader reads a text file as the clean UTF-8 that Decode would make
// of all of it, a chunk at a time, so that an extractor of any flowing
// text format can stream a file in any encoding sniff recognises. It is
// not safe for concurrent use.
type TextReader struct {
	f     *os.File
	size  int64
	enc   sniff.TextEncoding
	valid bool // UTF-8 without a BOM, all valid: decoding is the identity
	chunk int

	src   io.Reader // the decoded text
	buf   []byte
	tail  []byte // the start of a character the last read cut, kept for the next
	c     cleaner
	out   []byte // cleaned text Read has not handed out
	atEOF bool
}

var _ io.Reader = (*TextReader)(nil)

// OpenText opens a text file after sniff.OpenFile's checks and chooses its
// encoding as sniff.DetectEncoding would over all of it, reading it once
// (a byte-order mark or UTF-16's NUL pattern decides at once). The text
// then comes from Next or Read. The caller closes it.
func OpenText(ctx context.Context, path string, limits extract.Limits) (*TextReader, error) {
	return openText(ctx, path, limits, chunkSize)
}

// openText is OpenText reading chunk bytes at a time.
func openText(ctx context.Context, path string, limits extract.Limits, chunk int) (*TextReader, error) {
	limits = limits.WithDefaults()
	f, size, err := sniff.OpenFile(path, limits)
	if err != nil {
		return nil, err
	}
	// A small file needs no full-size buffers: many small documents would
	// each allocate them.
	if size < int64(chunk) {
		chunk = int(size) + 1
	}
	enc, valid, err := detectEncoding(ctx, io.LimitReader(f, size), chunk)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	t := &TextReader{f: f, size: size, enc: enc, valid: valid, chunk: chunk, buf: make([]byte, chunk+utf8.UTFMax)}
	if err := t.Rewind(); err != nil {
		_ = f.Close()
		return nil, err
	}
	return t, nil
}

// Encoding is the name of the encoding the text is decoded from.
func (t *TextReader) Encoding() string { return t.enc.Name }

// Rewind starts the text again from its beginning, for a caller that
// reads it more than once.
func (t *TextReader) Rewind() error {
	if _, err := t.f.Seek(int64(t.enc.BOMLen), io.SeekStart); err != nil {
		return err
	}
	t.src = io.LimitReader(t.f, t.size-int64(t.enc.BOMLen))
	if !t.valid {
		t.src = transform.NewReader(t.src, decoder(t.enc.Name))
	} // else the UTF-8 decoder would copy every byte and change none
	t.tail, t.c, t.out, t.atEOF = nil, cleaner{out: t.c.out[:0]}, nil, false
	return nil
}

// Next returns the next part of the text, which ends on a character
// boundary, and io.EOF after the last. A part may be empty; it is valid
// until the next call. Next and Read take from the same text.
func (t *TextReader) Next() ([]byte, error) {
	if len(t.out) > 0 {
		b := t.out
		t.out = nil
		return b, nil
	}
	if t.atEOF {
		return nil, io.EOF
	}
	keep := copy(t.buf, t.tail)
	n, err := io.ReadFull(t.src, t.buf[keep:keep+t.chunk])
	eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	if err != nil && !eof {
		return nil, err
	}
	data := t.buf[:keep+n]
	end := len(data)
	if !eof {
		end = sniff.CompleteRunes(data) // a character cut by the read waits for the next
	}
	t.tail, t.atEOF = data[end:], eof
	return t.c.clean(data[:end]), nil
}

// Read is io.Reader over the text.
func (t *TextReader) Read(p []byte) (int, error) {
	for len(t.out) == 0 {
		b, err := t.Next()
		if err != nil {
			return 0, err
		}
		t.out = b
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

// Close closes the file.
func (t *TextReader) Close() error { return t.f.Close() }
