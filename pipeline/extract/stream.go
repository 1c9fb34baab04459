package extract

import (
	"context"
	"fmt"
)

// PageStreamer is a PDFExtractor that hands each page over as soon as it
// is extracted, so that the caller's work on early pages (writing them,
// say) overlaps the extraction of later ones.
type PageStreamer interface {
	PDFExtractor
	// StreamPages calls emit once per page with the Unit Extract would
	// return for it. Pages of different ranges may arrive in any order, but
	// emit is never called concurrently. It returns the number of pages;
	// an error from emit stops the extraction and is returned.
	StreamPages(ctx context.Context, path string, limits Limits, emit func(Unit) error) (int, error)
}

// CountedPageStreamer is a PageStreamer that can be told how many pages
// the document has, when its caller counted them already (segment_prep
// does, to check the page limit), so that it does not count them again:
// for poppler that is one pdfinfo process less per document.
type CountedPageStreamer interface {
	PageStreamer
	// StreamCountedPages is StreamPages for a document of pages pages. A
	// count that does not match the document fails the extraction; it
	// never leaves pages out.
	StreamCountedPages(ctx context.Context, path string, pages int, limits Limits, emit func(Unit) error) (int, error)
}

// UnitStreamer extracts a file of flowing text (or pages) unit by unit:
// it calls emit once per unit, in order, as soon as the unit is complete,
// so that memory is bounded by a unit rather than by the file. It returns
// the number of units; an error from emit stops it and is returned.
// PageStreamer.StreamPages has this shape, with pages that may arrive out
// of order.
type UnitStreamer func(ctx context.Context, path string, limits Limits, emit func(Unit) error) (int, error)

// Collect is Extract for a format that streams: it runs stream over path
// and returns the units by their Index (pages that arrive out of order
// take their place).
func Collect(ctx context.Context, stream UnitStreamer, path string, limits Limits) ([]Unit, error) {
	units := []Unit{}
	if _, err := stream(ctx, path, limits, func(u Unit) error {
		if u.Index < 1 {
			return fmt.Errorf("extract: unit %d: indexes start at 1", u.Index)
		}
		if u.Index > len(units) {
			units = append(units, make([]Unit, u.Index-len(units))...)
		}
		units[u.Index-1] = u
		return nil
	}); err != nil {
		return nil, err
	}
	return units, nil
}
