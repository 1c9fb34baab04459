// Package sniff recognises a document's format from its bytes, never from
// its name (a PDF named .txt is a PDF), and checks it against the limits
// before any extractor spends time on it.
package sniff

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig validates JPEG headers
	_ "image/png"  // and PNG headers
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/net/html/charset"

	"github.com/docpipe/docpipe/internal/fileopen"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// HeadSize is how many leading bytes Inspect reads to recognise a format.
// Detect works on any prefix; this one is enough for its text heuristics.
const HeadSize = 8 << 10

// pdfJunkWindow: PDF readers accept up to 1 KB of junk before "%PDF-".
const pdfJunkWindow = 1024

// Info describes a file that passed inspection.
type Info struct {
	Format   extract.Format `json:"format"`
	MIMEType string         `json:"mime_type"`
	// Encoding is the text encoding guessed from the head of a text, HTML or
	// Markdown file (Encoding* constants or an HTML charset label); empty
	// for binary formats.
	Encoding string `json:"encoding,omitempty"`
	Size     int64  `json:"size"`
}

type container int

const (
	noContainer container = iota
	zipContainer
	cfbContainer
)

type result struct {
	format    extract.Format
	encoding  string
	container container
	err       error
}

var (
	pngMagic    = []byte("\x89PNG\r\n\x1a\n")
	jpegMagic   = []byte{0xFF, 0xD8, 0xFF}
	tiffLEMagic = []byte("II*\x00")
	tiffBEMagic = []byte("MM\x00*")
	zipMagic    = []byte("PK\x03\x04")
	zipEmpty    = []byte("PK\x05\x06")
	warcMagic   = []byte("WARC/1.")
)

// pdfMagic is compiled on first use, not at start-up.
var pdfMagic = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%PDF-\d\.\d`) })

// Detect recognises a format from the first bytes of a file (HeadSize is
// plenty). Failures are step errors: InvalidDocumentError for an empty
// file, UnsupportedFormatError for formats docpipe does not process and for
// binary data it cannot name.
//
// A zip archive is reported as DOCX when an entry under word/ shows in the
// head, but only Inspect, which reads the central directory, is
// authoritative for zip and Compound File containers.
func Detect(head []byte) (extract.Format, error) {
	r := detect(head)
	return r.format, r.err
}

func detect(head []byte) result {
	if len(head) == 0 {
		return result{err: &steperr.InvalidDocumentError{Reason: "file is empty"}}
	}
	switch {
	case bytes.HasPrefix(head, pngMagic):
		return result{format: extract.FormatPNG}
	case bytes.HasPrefix(head, jpegMagic):
		return result{format: extract.FormatJPEG}
	case bytes.HasPrefix(head, tiffLEMagic), bytes.HasPrefix(head, tiffBEMagic):
		return result{format: extract.FormatTIFF}
	case pdfMagic().Match(head[:min(len(head), pdfJunkWindow+8)]):
		return result{format: extract.FormatPDF}
	case bytes.HasPrefix(head, zipMagic):
		return zipGuess(head)
	case bytes.HasPrefix(head, zipEmpty):
		return result{err: &steperr.InvalidDocumentError{Reason: "empty zip archive"}}
	case bytes.HasPrefix(head, cfbMagic):
		return result{container: cfbContainer, err: &steperr.UnsupportedFormatError{Reason: "OLE2 compound file (legacy Office document)"}}
	case bytes.HasPrefix(head, []byte(`{\rtf`)):
		return result{err: &steperr.UnsupportedFormatError{Reason: "RTF document"}}
	case bytes.HasPrefix(head, warcMagic):
		return result{format: extract.FormatWebArchive}
	case bytes.HasPrefix(head, []byte("%!PS")):
		return result{err: &steperr.UnsupportedFormatError{Reason: "PostScript document"}}
	}
	if f, ok := audioFormat(head); ok {
		return result{format: f}
	}
	enc, ok := DetectEncoding(head)
	if !ok {
		// A bare MPEG frame header starts with 0xFF: a UTF-16 byte order
		// mark looks like one, so text is ruled out first.
		if mpegFrameHeader(head) {
			return result{format: extract.FormatMP3}
		}
		return result{err: binaryError(head)}
	}
	text := decodeHead(head, enc)
	switch {
	case looksLikeHTML(text):
		_, name, _ := charset.DetermineEncoding(head, "")
		return result{format: extract.FormatHTML, encoding: name}
	case looksLikeMarkdown(text):
		return result{format: extract.FormatMarkdown, encoding: enc.Name}
	}
	return result{format: extract.FormatText, encoding: enc.Name}
}

// binaryError names what it can of data that is not text: net/http's
// sniffer knows the common image, audio, video and archive signatures.
func binaryError(head []byte) error {
	mime := http.DetectContentType(head)
	if mime != "application/octet-stream" && !strings.HasPrefix(mime, "text/") {
		return &steperr.UnsupportedFormatError{Reason: mime + " is not a supported format"}
	}
	return &steperr.UnsupportedFormatError{Reason: "binary data of unknown format"}
}

// zipGuess reads entry names from the local file headers in the head.
func zipGuess(head []byte) result {
	r := result{container: zipContainer}
	switch {
	case bytes.Contains(head, []byte("word/")):
		r.format = extract.FormatDOCX
	default:
		if kind := otherZipKind(func(name string) bool { return bytes.Contains(head, []byte(name)) }, string(head)); kind != "" {
			r.err = &steperr.UnsupportedFormatError{Reason: kind}
		} else {
			r.err = &steperr.UnsupportedFormatError{Reason: "zip archive without a word/ part in its first entries (not a DOCX document?)"}
		}
	}
	return r
}

// otherZipKind names zip-based formats that are not DOCX. mimetype is the
// content of an ODF/EPUB "mimetype" entry (or any text containing it).
func otherZipKind(has func(string) bool, mimetype string) string {
	switch {
	case has("xl/workbook"):
		return "XLSX spreadsheet (only DOCX is supported among Office formats)"
	case has("ppt/presentation"):
		return "PPTX presentation (only DOCX is supported among Office formats)"
	case strings.Contains(mimetype, "application/epub+zip"):
		return "EPUB e-book"
	case strings.Contains(mimetype, "application/vnd.oasis.opendocument"):
		return "OpenDocument file (only DOCX is supported among office formats)"
	}
	return ""
}

// Inspect opens a file, checks its size, recognises its format from its
// bytes and, for containers, validates the layout: a zip must be a DOCX
// whose main part decompresses within the limits; a Compound File is a
// password-protected OOXML file (PasswordProtectedError) or a legacy binary
// Office file (UnsupportedFormatError). Nothing is written to disk.
func Inspect(ctx context.Context, path string, limits extract.Limits) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	limits = limits.WithDefaults()
	f, size, err := openChecked(path, limits)
	if err != nil {
		return Info{}, err
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, min(size, HeadSize))
	if _, err := f.ReadAt(head, 0); err != nil && err != io.EOF {
		return Info{}, fmt.Errorf("sniff: read %s: %w", path, err)
	}
	info := Info{Size: size}
	r := detect(head)
	switch r.container {
	case zipContainer:
		if err := inspectDOCX(ctx, f, size, limits); err != nil {
			return info, err
		}
		r = result{format: extract.FormatDOCX}
	case cfbContainer:
		return info, inspectCFB(f, size)
	}
	if r.err != nil {
		return info, r.err
	}
	if r.format == extract.FormatPNG || r.format == extract.FormatJPEG {
		if _, _, err := image.DecodeConfig(bytes.NewReader(head)); err != nil {
			return info, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("corrupt %s image: %v", strings.ToUpper(string(r.format)), err)}
		}
	}
	info.Format, info.MIMEType, info.Encoding = r.format, r.format.MIMEType(), r.encoding
	return info, nil
}

// openChecked opens path and enforces the file-size limits.
func openChecked(path string, limits extract.Limits) (*os.File, int64, error) {
	limits = limits.WithDefaults()
	f, err := fileopen.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	switch {
	case st.IsDir():
		err = &steperr.InvalidDocumentError{Reason: "is a directory, not a file"}
	case st.Size() == 0:
		err = &steperr.InvalidDocumentError{Reason: "file is empty"}
	case st.Size() > limits.MaxFileBytes:
		err = &steperr.TooLargeError{Reason: fmt.Sprintf("file is %d bytes, over the limit of %d", st.Size(), limits.MaxFileBytes)}
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// OpenFile opens a file for an extractor after the same checks as Inspect's
// (not a directory, not empty, within MaxFileBytes) and returns its size.
func OpenFile(path string, limits extract.Limits) (*os.File, int64, error) {
	return openChecked(path, limits)
}

// ReadFile reads a whole file after OpenFile's checks.
func ReadFile(path string, limits extract.Limits) ([]byte, error) {
	f, size, err := openChecked(path, limits)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

func inspectDOCX(ctx context.Context, f io.ReaderAt, size int64, limits extract.Limits) error {
	a, err := NewArchive(f, size, limits)
	if err != nil {
		return err
	}
	main, err := DOCXMainPart(ctx, a)
	if err != nil {
		return err
	}
	// Decompress the body once: a bomb or a corrupt entry fails here,
	// in memory, before any extractor runs.
	rc, err := a.Open(ctx, main)
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	_, err = io.Copy(io.Discard, rc)
	return err
}

func inspectCFB(f io.ReaderAt, size int64) error {
	names, err := cfbEntryNames(f, size)
	if err != nil {
		return &steperr.InvalidDocumentError{Reason: "corrupt OLE2 compound file"}
	}
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	switch {
	case has["EncryptedPackage"]:
		return &steperr.PasswordProtectedError{Reason: "encrypted Office document (OOXML in an encrypted package); remove the password and upload again"}
	case has["WordDocument"]:
		return &steperr.UnsupportedFormatError{Reason: "legacy Word 97-2003 .doc document; save it as .docx"}
	case has["Workbook"] || has["Book"]:
		return &steperr.UnsupportedFormatError{Reason: "legacy Excel .xls spreadsheet"}
	case has["PowerPoint Document"]:
		return &steperr.UnsupportedFormatError{Reason: "legacy PowerPoint .ppt presentation"}
	}
	return &steperr.UnsupportedFormatError{Reason: "OLE2 compound file of unknown kind"}
}
