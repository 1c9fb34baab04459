// Package plaintext extracts sections from plain text files in any of the
// encodings sniff recognises, and provides the decoding and section
// splitting that the other flowing-text extractors share.
package plaintext

import (
	"context"
	"strings"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/sniff"
)

// Extract reads a text file and returns sections of about
// limits.MaxSectionChars, split at paragraph boundaries. A file of only
// whitespace gives no units.
func Extract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	limits = limits.WithDefaults()
	b, err := sniff.ReadFile(path, limits)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	text, _ := Decode(b)
	return Split(ctx, text, limits)
}

// Split cuts decoded text into sections at paragraph boundaries: blank
// lines (or lines of only spaces) and form feeds.
func Split(ctx context.Context, text string, limits extract.Limits) ([]extract.Unit, error) {
	s := NewSplitter("section", limits)
	var para []string
	flush := func() {
		if len(para) > 0 {
			s.Block(strings.Join(para, "\n"))
			para = para[:0]
		}
	}
	for i := 0; len(text) > 0; i++ {
		if i%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		line := text
		if nl := strings.IndexByte(text, '\n'); nl >= 0 {
			line, text = text[:nl], text[nl+1:]
		} else {
			text = ""
		}
		for {
			ff := strings.IndexByte(line, '\f')
			if ff < 0 {
				break
			}
			if l := strings.TrimRight(line[:ff], " \t"); strings.TrimSpace(l) != "" {
				para = append(para, l)
			}
			flush()
			line = line[ff+1:]
		}
		line = strings.TrimRight(line, " \t")
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		para = append(para, line)
	}
	flush()
	return s.Units()
}
