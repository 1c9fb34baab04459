package extract

import "context"

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

// UnitStreamer extracts a file of flowing text (or pages) unit by unit:
// it calls emit once per unit, in order, as soon as the unit is complete,
// so that memory is bounded by a unit rather than by the file. It returns
// the number of units; an error from emit stops it and is returned.
// PageStreamer.StreamPages has this shape, with pages that may arrive out
// of order.
type UnitStreamer func(ctx context.Context, path string, limits Limits, emit func(Unit) error) (int, error)
