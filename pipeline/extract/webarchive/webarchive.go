// Package webarchive extracts the pages of a WARC file (a crawl): one
// unit per HTML or plain-text page, in the order the pages were fetched.
package webarchive

import (
	"context"
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/htmltext"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/extract/warc"
	"github.com/docpipe/docpipe/pipeline/sniff"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Extract returns one "page" unit per readable page of the archive.
func Extract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	limits = limits.WithDefaults()
	f, size, err := sniff.OpenFile(path, limits)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pages, err := warc.Read(f, size)
	if err != nil {
		return nil, err
	}
	var units []extract.Unit
	for _, p := range pages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		text, err := pageText(ctx, p, limits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.URL, err)
		}
		if text == "" {
			continue
		}
		if len(units) == limits.MaxPages {
			return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("over %d pages", limits.MaxPages)}
		}
		units = append(units, extract.Unit{Index: len(units) + 1, Kind: "page", Text: text})
	}
	return units, nil
}

// pageText is a page's text: HTML as the HTML extractor reads it (its
// sections joined), plain text decoded; anything else has none.
func pageText(ctx context.Context, p warc.Page, limits extract.Limits) (string, error) {
	switch {
	case p.IsHTML():
		// One page is one segment however long: sections must not split it.
		limits.MaxSectionChars = max(len(p.Body), 1)
		us, err := htmltext.ExtractBytes(ctx, p.Body, limits)
		if err != nil {
			return "", err
		}
		parts := make([]string, len(us))
		for i, u := range us {
			parts[i] = u.Text
		}
		return strings.TrimSpace(strings.Join(parts, "\n\n")), nil
	case p.ContentType() == "text/plain":
		text, _ := plaintext.Decode(p.Body)
		return strings.TrimSpace(plaintext.Clean(text)), nil
	}
	return "", nil
}
