package sniff

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Bounds on zip containers beyond extract.Limits. Real DOCX files have tens
// of entries and compress their XML 5–20 times (machine-made, repetitive
// tables reach a few hundred); deflate cannot exceed about 1032:1, which is
// what a zip bomb uses. A bomb built below the ratio cap still stops at
// MaxDecompressedBytes.
const (
	MaxZipEntries       = 10_000
	MaxCompressionRatio = 500
	// ratioFloor exempts small entries from the ratio check: a tiny run of
	// repeated bytes can compress very well without costing anything.
	ratioFloor = 1 << 20
)

// Archive is a zip file whose decompression is bounded: every byte read
// through Open counts against limits.MaxDecompressedBytes (shared by all
// entries) and against the entry's compression-ratio cap, so a file whose
// declared sizes lie still fails fast, in memory, with TooLargeError.
type Archive struct {
	zr     *zip.Reader
	files  map[string]*zip.File
	limit  int64
	mu     sync.Mutex
	used   int64
	closer io.Closer
}

// OpenArchive opens a zip file and checks its central directory against
// the limits before anything is decompressed: entry count, the sum of the
// declared uncompressed sizes, each entry's declared compression ratio, and
// zip-level encryption.
func OpenArchive(path string, limits extract.Limits) (*Archive, error) {
	f, size, err := openChecked(path, limits)
	if err != nil {
		return nil, err
	}
	a, err := NewArchive(f, size, limits)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	a.closer = f
	return a, nil
}

// NewArchive is OpenArchive over an already open file.
func NewArchive(r io.ReaderAt, size int64, limits extract.Limits) (*Archive, error) {
	limits = limits.WithDefaults()
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names never reach the disk
		return nil, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("corrupt zip archive: %v", err)}
	}
	if len(zr.File) > MaxZipEntries {
		return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("zip archive has %d entries, over the limit of %d", len(zr.File), MaxZipEntries)}
	}
	a := &Archive{zr: zr, files: make(map[string]*zip.File, len(zr.File)), limit: limits.MaxDecompressedBytes}
	var declared uint64
	for _, f := range zr.File {
		if f.Flags&0x1 != 0 {
			return nil, &steperr.PasswordProtectedError{Reason: fmt.Sprintf("zip entry %q is encrypted", f.Name)}
		}
		declared += f.UncompressedSize64
		if declared > uint64(a.limit) {
			return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("zip archive declares more than %d bytes of uncompressed content", a.limit)}
		}
		if ratioExceeded(f.UncompressedSize64, f.CompressedSize64) {
			return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("zip entry %q declares a compression ratio over %d:1 (%d bytes from %d; zip bomb?)", f.Name, MaxCompressionRatio, f.UncompressedSize64, f.CompressedSize64)}
		}
		if _, dup := a.files[f.Name]; !dup {
			a.files[f.Name] = f
		}
	}
	return a, nil
}

func ratioExceeded(out, in uint64) bool {
	return out > ratioFloor && out > MaxCompressionRatio*max(in, 1)
}

// Close closes the underlying file when the Archive opened it.
func (a *Archive) Close() error {
	if a.closer != nil {
		return a.closer.Close()
	}
	return nil
}

// Names lists the entries in central-directory order.
func (a *Archive) Names() []string {
	names := make([]string, 0, len(a.zr.File))
	for _, f := range a.zr.File {
		names = append(names, f.Name)
	}
	return names
}

// Has reports whether the archive holds an entry of that name.
func (a *Archive) Has(name string) bool { _, ok := a.files[name]; return ok }

// Open returns a bounded reader over one entry. Its errors are step errors:
// TooLargeError past a limit, InvalidDocumentError for corrupt data.
func (a *Archive) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	f, ok := a.files[name]
	if !ok {
		return nil, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("zip entry %q is missing", name)}
	}
	rc, err := f.Open()
	if err != nil {
		if errors.Is(err, zip.ErrAlgorithm) {
			return nil, &steperr.UnsupportedFormatError{Reason: fmt.Sprintf("zip entry %q uses unsupported compression method %d", name, f.Method)}
		}
		return nil, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("zip entry %q: %v", name, err)}
	}
	return &boundedReader{ctx: ctx, a: a, f: f, rc: rc}, nil
}

// ReadAll reads a whole entry, at most max bytes (a manifest or relationship
// part, never the document body).
func (a *Archive) ReadAll(ctx context.Context, name string, maxBytes int64) ([]byte, error) {
	rc, err := a.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(io.LimitReader(rc, maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > maxBytes {
		return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("zip entry %q is over %d bytes", name, maxBytes)}
	}
	return b, nil
}

// charge counts n decompressed bytes against the archive-wide budget.
func (a *Archive) charge(n int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.used += int64(n)
	if a.used > a.limit {
		return &steperr.TooLargeError{Reason: fmt.Sprintf("zip archive decompresses to more than %d bytes", a.limit)}
	}
	return nil
}

type boundedReader struct {
	ctx  context.Context
	a    *Archive
	f    *zip.File
	rc   io.ReadCloser
	read uint64
}

func (r *boundedReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := r.rc.Read(p)
	r.read += uint64(n)
	if cerr := r.a.charge(n); cerr != nil {
		return n, cerr
	}
	if ratioExceeded(r.read, r.f.CompressedSize64) {
		return n, &steperr.TooLargeError{Reason: fmt.Sprintf("zip entry %q expands more than %d:1 (zip bomb?)", r.f.Name, MaxCompressionRatio)}
	}
	switch {
	case err == nil || err == io.EOF:
		return n, err
	case errors.Is(err, zip.ErrFormat):
		// archive/zip stops an entry at its declared size: the declared
		// size lied, which is how a zip bomb hides.
		return n, &steperr.TooLargeError{Reason: fmt.Sprintf("zip entry %q expands beyond its declared %d bytes (zip bomb?)", r.f.Name, r.f.UncompressedSize64)}
	case errors.Is(err, zip.ErrChecksum):
		return n, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("zip entry %q is corrupt (checksum mismatch)", r.f.Name)}
	default:
		return n, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("zip entry %q is corrupt: %v", r.f.Name, err)}
	}
}

func (r *boundedReader) Close() error { return r.rc.Close() }
