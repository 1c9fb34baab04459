// Package pdftext extracts one text unit per page from a PDF, with two
// backends behind extract.PDFExtractor: poppler's pdftotext (fast, robust,
// run once per document or per large page range) and a pure-Go extractor on
// github.com/ledongthuc/pdf that always works.
//
// Error policy, shared by both backends:
//   - corrupt, truncated, not a PDF, broken page tree: *steperr.InvalidDocumentError
//   - needs a user password: *steperr.PasswordProtectedError (files that
//     open with the empty user password are extracted)
//   - more pages than Limits.MaxPages, or over the backend's own time or
//     memory budget: *steperr.TooLargeError. A document that took too long
//     once will take too long again, so the timeout is permanent, not
//     transient.
//   - the caller's context ending: the context's error, unchanged, so the
//     caller decides (pipeline.ErrorName reports a deadline as transient).
package pdftext

import (
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// New returns the extractor for choice: "auto" (poppler when installed,
// else pure Go), "poppler" or "go".
func New(choice string) (extract.PDFExtractor, error) {
	switch strings.ToLower(strings.TrimSpace(choice)) {
	case "", "auto":
		if PopplerAvailable() {
			return NewPoppler(), nil
		}
		return NewPureGo(), nil
	case "poppler":
		if !PopplerAvailable() {
			return nil, fmt.Errorf("pdftext: poppler requested but pdftotext/pdfinfo are not on PATH")
		}
		return NewPoppler(), nil
	case "go", "purego", "pure-go":
		return NewPureGo(), nil
	}
	return nil, fmt.Errorf("pdftext: unknown extractor %q (want auto, poppler or go)", choice)
}

// pageUnit is page n with its text; a page without text is flagged for
// OCR. A blank page is indistinguishable from an image-only page here,
// which costs one OCR pass that finds nothing.
func pageUnit(n int, text string) extract.Unit {
	text = strings.TrimSpace(text)
	return extract.Unit{Index: n, Kind: "page", Text: text, NeedsOCR: text == ""}
}
