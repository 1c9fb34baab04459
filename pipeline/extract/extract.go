// Package extract holds the types shared by the format sniffer and the
// per-format text extractors. Extractors return the step error types of
// package pipeline (InvalidDocumentError, PasswordProtectedError, ...) so
// that a bad file fails its workflow with a readable, correctly named reason.
package extract

import (
	"context"
	"strings"
)

// Format is a document format recognised from its bytes.
type Format string

const (
	FormatPDF      Format = "pdf"
	FormatDOCX     Format = "docx"
	FormatHTML     Format = "html"
	FormatMarkdown Format = "markdown"
	FormatText     Format = "text"
	FormatPNG      Format = "png"
	FormatJPEG     Format = "jpeg"
	FormatTIFF     Format = "tiff"
	// FormatWebArchive is a WARC file: a crawl of web pages, one segment
	// per page.
	FormatWebArchive Format = "warc"
	// Audio formats: transcribed, one segment per span of time.
	FormatWAV  Format = "wav"
	FormatMP3  Format = "mp3"
	FormatFLAC Format = "flac"
	FormatOGG  Format = "ogg"
)

// Formats are every format the sniffer recognises, in the order users read
// them.
var Formats = []Format{
	FormatPDF, FormatDOCX, FormatHTML, FormatMarkdown, FormatText,
	FormatPNG, FormatJPEG, FormatTIFF, FormatWebArchive,
	FormatWAV, FormatMP3, FormatFLAC, FormatOGG,
}

// MIMEType returns the format's MIME type.
func (f Format) MIMEType() string {
	switch f {
	case FormatPDF:
		return "application/pdf"
	case FormatDOCX:
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	case FormatHTML:
		return "text/html"
	case FormatMarkdown:
		return "text/markdown"
	case FormatText:
		return "text/plain"
	case FormatPNG:
		return "image/png"
	case FormatJPEG:
		return "image/jpeg"
	case FormatTIFF:
		return "image/tiff"
	case FormatWebArchive:
		return "application/warc"
	case FormatWAV:
		return "audio/wav"
	case FormatMP3:
		return "audio/mpeg"
	case FormatFLAC:
		return "audio/flac"
	case FormatOGG:
		return "audio/ogg"
	}
	return "application/octet-stream"
}

// IsImage reports whether the format is a raster image (OCR only): its
// MIME type says so, so a new image format needs no second list.
func (f Format) IsImage() bool { return strings.HasPrefix(f.MIMEType(), "image/") }

// IsAudio reports whether the format is sound (transcription only).
func (f Format) IsAudio() bool { return strings.HasPrefix(f.MIMEType(), "audio/") }

// Unit is one page (paged formats) or section (flowing text) of extracted
// text, in document order.
type Unit struct {
	Index    int    `json:"index"` // 1-based
	Kind     string `json:"kind"`  // "page" or "section"
	Text     string `json:"text"`
	NeedsOCR bool   `json:"needs_ocr,omitempty"` // no text layer: an image page
	// Audio is the stretch of sound a "span" unit covers; its text comes
	// from a speech recogniser, not from the file.
	Audio *Span `json:"audio,omitempty"`
}

// Span is a stretch of audio, in milliseconds from the start.
type Span struct {
	StartMS int64 `json:"start_ms"`
	EndMS   int64 `json:"end_ms"`
}

// Limits bound what one document may cost. Zero fields take DefaultLimits.
type Limits struct {
	MaxFileBytes         int64 // size of the uploaded file
	MaxPages             int   // pages of a PDF (or sections of flowing text)
	MaxDecompressedBytes int64 // total uncompressed size of a zip-based file
	MaxSectionChars      int   // target size of one section of flowing text
	// A PDF page's drawing instructions, decompressed: one content
	// stream, and everything one page runs (its streams and each form it
	// draws, counted every time it is drawn). Pure-Go backend only.
	MaxContentStreamBytes int64
	MaxPageContentBytes   int64
	MaxPageGlyphs         int // characters drawn on one PDF page (pure-Go backend)
}

// DefaultLimits are generous for real documents and stop abuse early.
var DefaultLimits = Limits{
	MaxFileBytes:         512 << 20,
	MaxPages:             50_000,
	MaxDecompressedBytes: 1 << 30,
	MaxSectionChars:      4_000,
	// A text-dense page draws about 5,000 glyphs from well under 1 MB of
	// instructions; large vector drawings reach tens of MB.
	MaxContentStreamBytes: 64 << 20,
	MaxPageContentBytes:   256 << 20,
	MaxPageGlyphs:         500_000,
}

// WithDefaults fills zero fields from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultLimits.MaxFileBytes
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultLimits.MaxPages
	}
	if l.MaxDecompressedBytes <= 0 {
		l.MaxDecompressedBytes = DefaultLimits.MaxDecompressedBytes
	}
	if l.MaxSectionChars <= 0 {
		l.MaxSectionChars = DefaultLimits.MaxSectionChars
	}
	if l.MaxContentStreamBytes <= 0 {
		l.MaxContentStreamBytes = DefaultLimits.MaxContentStreamBytes
	}
	if l.MaxPageContentBytes <= 0 {
		l.MaxPageContentBytes = DefaultLimits.MaxPageContentBytes
	}
	if l.MaxPageGlyphs <= 0 {
		l.MaxPageGlyphs = DefaultLimits.MaxPageGlyphs
	}
	return l
}

// PDFExtractor extracts one text unit per page from a PDF held in a file.
// Implementations: poppler's pdftotext and a pure-Go extractor.
type PDFExtractor interface {
	Name() string
	// Pages returns the number of pages without extracting text.
	Pages(ctx context.Context, path string) (int, error)
	// Extract returns one Unit per page, Kind "page", in page order. Pages
	// without a text layer come back with NeedsOCR set and empty Text.
	Extract(ctx context.Context, path string, limits Limits) ([]Unit, error)
}
