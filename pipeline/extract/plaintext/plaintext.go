// Package plaintext extracts sections from plain text files in any of the
// encodings sniff recognises, and provides the decoding and section
// splitting that the other flowing-text extractors share.
package plaintext

import (
	"context"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// Extract reads a text file and returns sections of about
// limits.MaxSectionChars, split at paragraph boundaries. A file of only
// whitespace gives no units. It is Stream, keeping the sections.
func Extract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	return extract.Collect(ctx, Stream, path, limits)
}

// Split cuts decoded text into sections at paragraph boundaries: blank
// lines (or lines of only spaces) and form feeds.
func Split(ctx context.Context, text string, limits extract.Limits) ([]extract.Unit, error) {
	s := NewSplitter("section", limits)
	p := newParagraphs(s, limits)
	for len(text) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Parts end before a rune start (or among stray continuation
		// bytes), where decoding the whole would also start a rune.
		n := min(len(text), 1<<20)
		for k := 0; k < utf8.UTFMax-1 && n < len(text) && !utf8.RuneStart(text[n]); k++ {
			n--
		}
		p.write([]byte(text[:n]))
		text = text[n:]
	}
	p.close()
	return s.Units()
}
