package steps

import (
	"context"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/docx"
	"github.com/docpipe/docpipe/pipeline/extract/htmltext"
	"github.com/docpipe/docpipe/pipeline/extract/mdtext"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/extract/webarchive"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// extractFlowing extracts the formats without pages of their own.
func extractFlowing(ctx context.Context, prep prepInfo, path string, limits extract.Limits) ([]extract.Unit, error) {
	switch prep.Format {
	case extract.FormatDOCX:
		return docx.Extract(ctx, path, limits)
	case extract.FormatHTML:
		return htmltext.Extract(ctx, path, limits)
	case extract.FormatMarkdown:
		return mdtext.Extract(ctx, path, limits)
	case extract.FormatText:
		return plaintext.Extract(ctx, path, limits)
	case extract.FormatWebArchive:
		return webarchive.Extract(ctx, path, limits)
	}
	return nil, &steperr.UnsupportedFormatError{Reason: fmt.Sprintf("no extractor for %s", prep.Format)}
}

// flowingStreamer returns the extractor that streams a flowing format
// unit by unit, nil for the formats extracted whole.
func flowingStreamer(f extract.Format) extract.UnitStreamer {
	switch f {
	case extract.FormatText:
		return plaintext.Stream
	case extract.FormatHTML:
		return htmltext.Stream
	case extract.FormatDOCX:
		return docx.Stream
	case extract.FormatMarkdown:
		return mdtext.Stream
	}
	return nil
}
