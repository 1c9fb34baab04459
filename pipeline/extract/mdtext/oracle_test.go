package mdtext

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/text"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/sniff"
)

// The whole-file path that Stream replaced, kept as the oracle: Stream
// must give exactly its units.

// wholeExtract is Extract as it was: the whole file read and decoded,
// then rendered by wholeRender.
func wholeExtract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	limits = limits.WithDefaults()
	b, err := sniff.ReadFile(path, limits)
	if err != nil {
		return nil, err
	}
	return wholeExtractString(ctx, wholeDecode(b), limits)
}

// wholeDecode is plaintext.Decode with one copy of the file instead of
// two in the common case of valid UTF-8, which decodes to itself.
func wholeDecode(b []byte) string {
	if enc, _ := sniff.DetectEncoding(b); enc.Name == sniff.EncodingUTF8 && utf8.Valid(b[enc.BOMLen:]) {
		return plaintext.Clean(string(b[enc.BOMLen:]))
	}
	src, _ := plaintext.Decode(b)
	return src
}

// wholeExtractString is ExtractString as it was.
func wholeExtractString(ctx context.Context, src string, limits extract.Limits) ([]extract.Unit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return wholeRender(ctx, src, chunkBytes, limits)
}

// wholeRender parses the source chunk by chunk and renders the chunks in
// order into one series of sections. A cut that turns out to fall inside
// a code fence or a raw HTML block is undone: the rest is parsed whole.
func wholeRender(ctx context.Context, src string, target int, limits extract.Limits) ([]extract.Unit, error) {
	r := &renderer{ctx: ctx, s: plaintext.NewSplitter("section", limits)}
	for start := 0; start < len(src); {
		if r.err = ctx.Err(); r.err != nil {
			return nil, r.err
		}
		end := wholeNextCut(src, start, target)
		r.src = []byte(src[start:end])
		doc := md().Parser().Parse(text.NewReader(r.src))
		if end < len(src) && !closedAtEnd(doc, r.src) {
			end = len(src)
			r.src = []byte(src[start:])
			doc = md().Parser().Parse(text.NewReader(r.src))
		}
		r.block(doc)
		if r.err != nil {
			return nil, r.err
		}
		start = end
	}
	return r.s.Units()
}

// wholeNextCut is the cut wholeRender makes; a source that may hold a
// link reference definition is never cut.
func wholeNextCut(src string, start, target int) int {
	if len(src)-start <= target || strings.Contains(src[start:], "]:") {
		return len(src)
	}
	var (
		fence     string // the open fence's marker, e.g. "```"
		htmlEnd   string // what ends the open HTML block
		prevBlank bool
	)
	for pos := start; pos < len(src); {
		end := strings.IndexByte(src[pos:], '\n') + 1
		if end == 0 {
			end = len(src)
		} else {
			end += pos
		}
		line := src[pos:end]
		if pos-start >= target && prevBlank && fence == "" && htmlEnd == "" && startsTopBlock([]byte(line)) {
			return pos
		}
		switch {
		case fence != "":
			if closesFence(line, fence) {
				fence = ""
			}
		case htmlEnd != "":
			if strings.Contains(strings.ToLower(line), htmlEnd) {
				htmlEnd = ""
			}
		default:
			fence = opensFence(line)
			if fence == "" {
				htmlEnd = opensRawHTML(line)
			}
		}
		prevBlank = strings.TrimSpace(line) == ""
		pos = end
	}
	return len(src)
}
