package pdftext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"time"

	"github.com/ledongthuc/pdf"

	"github.com/docpipe/docpipe/internal/cpus"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/pdftext/pdfbounds"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// PureGo extracts text with github.com/ledongthuc/pdf, working around its
// weak spots without forking it: the page list is built once by walking the
// page tree ourselves (the library re-walks it for every page, trusts /Count
// and loops on a cyclic tree), every call into the library runs under
// recover, files whose numbers would make it allocate out of all
// proportion are refused before it sees them (pdfbounds), and text is
// assembled from glyph positions because the library's plain-text output
// glues words that producers separate by positioning.
type PureGo struct {
	// Timeout bounds one document. Default 10 minutes.
	Timeout time.Duration
	// Parallel is how many pages of one document are extracted at once.
	// Default: one per usable processor.
	Parallel int
}

// NewPureGo returns a pure-Go extractor with default settings.
func NewPureGo() *PureGo { return &PureGo{} }

func (g *PureGo) Name() string { return "go" }

func (g *PureGo) parallel() int {
	if g.Parallel > 0 {
		return g.Parallel
	}
	return cpus.Usable()
}

func (g *PureGo) timeout() time.Duration {
	if g.Timeout > 0 {
		return g.Timeout
	}
	return 10 * time.Minute
}

// maxTreeDepth bounds page-tree recursion; real trees are a few levels deep.
const maxTreeDepth = 64

// Pages walks the page tree and returns the real number of pages (which
// may differ from the /Count the file claims).
func (g *PureGo) Pages(ctx context.Context, path string) (int, error) {
	var n int
	err := g.withDocument(ctx, path, nil, func(ctx context.Context, r *pdf.Reader, _ func(extract.Unit) error) error {
		var err error
		n, err = walkPages(ctx, r, extract.DefaultLimits.MaxPages, func(treePage) error { return nil })
		return err
	})
	return n, err
}

// Extract returns one unit per page.
func (g *PureGo) Extract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	return extract.Collect(ctx, g.StreamPages, path, limits)
}

var _ extract.PageStreamer = (*PureGo)(nil)

// StreamPages emits the pages in order, each as soon as it and the pages
// before it are extracted, while it walks the page tree: memory is the
// walk's path through the tree and the pages in flight (a few per worker),
// whatever the number of pages (and an encrypted PDF, which is decrypted
// into memory). A page tree found broken, or longer than limits.MaxPages,
// fails after the pages before the fault were emitted.
func (g *PureGo) StreamPages(ctx context.Context, path string, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
	limits = limits.WithDefaults()
	n := 0 // counted here, on the caller's goroutine, as pages are emitted
	counted := func(u extract.Unit) error {
		n++
		return emit(u)
	}
	err := g.withDocument(ctx, path, counted, func(ctx context.Context, r *pdf.Reader, send func(extract.Unit) error) error {
		failed := 0
		pages, err := g.extractPages(ctx, r, limits, func(u extract.Unit, ok bool) error {
			if !ok {
				// One unreadable page leaves an empty, OCR-flagged unit
				// rather than sinking the document.
				failed++
			}
			return send(u)
		})
		if err != nil {
			return err
		}
		if failed == pages {
			return &steperr.InvalidDocumentError{Reason: "no page of the PDF could be read"}
		}
		return nil
	})
	return n, err
}

// withDocument opens path and runs fn in a goroutine under the document
// timeout. fn hands pages to send, and emit receives them here, on the
// caller's goroutine: when ctx ends first withDocument returns at once,
// and the abandoned goroutine (fn checks ctx between pages, so it finishes
// at most the page it is on) can no longer reach emit. An error from emit
// stops fn and is returned.
func (g *PureGo) withDocument(ctx context.Context, path string, emit func(extract.Unit) error, fn func(context.Context, *pdf.Reader, func(extract.Unit) error) error) error {
	ctx, cancel := withDeadline(ctx, g.timeout())
	defer cancel()
	if err := checkFile(path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return &steperr.InvalidDocumentError{Reason: fmt.Sprintf("cannot read PDF: %v", err)}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return &steperr.InvalidDocumentError{Reason: fmt.Sprintf("cannot read PDF: %v", err)}
	}

	units := make(chan extract.Unit)
	send := func(u extract.Unit) error {
		select {
		case units <- u:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	done := make(chan error, 1)
	go func() {
		// The file stays open until the work stops, even if we stopped
		// waiting for it.
		defer f.Close()
		done <- guard(func() error {
			// The library sizes tables from the file's numbers before
			// reading what they count, and an allocation it cannot get
			// ends the process rather than panicking.
			if err := pdfbounds.Check(f, fi.Size()); err != nil {
				return &steperr.InvalidDocumentError{Reason: err.Error()}
			}
			r, err := openReader(ctx, f, fi.Size())
			if err != nil {
				return err
			}
			return fn(ctx, r, send)
		})
	}()
	for {
		select {
		case u := <-units:
			if err := emit(u); err != nil {
				return err // the deferred cancel stops fn
			}
		case err := <-done:
			// send only returns once emit has the unit, so every unit
			// fn sent has been emitted by now.
			if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return g.contextError(ctx)
			}
			return err
		case <-ctx.Done():
			return g.contextError(ctx)
		}
	}
}

func (g *PureGo) contextError(ctx context.Context) error {
	var timeout *timeoutError
	if errors.As(context.Cause(ctx), &timeout) {
		return &steperr.TooLargeError{Reason: fmt.Sprintf("text extraction took longer than %v", timeout.after)}
	}
	return ctx.Err()
}

// guard converts a panic inside the library into an InvalidDocumentError.
func guard(fn func() error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = &steperr.InvalidDocumentError{Reason: fmt.Sprintf("malformed PDF: %v", x)}
		}
	}()
	return fn()
}

// openReader opens the PDF and maps the library's errors onto step errors.
// Encrypted files the library cannot decrypt itself are decrypted first
// (see decrypt.go); unencrypted files take the library's reader alone.
func openReader(ctx context.Context, f *os.File, size int64) (*pdf.Reader, error) {
	r, err := pdf.NewReaderEncrypted(f, size, func() string { return "" })
	if err == nil && libraryDecrypts(r.Trailer().Key("Encrypt")) {
		return r, nil
	}
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return nil, &steperr.PasswordProtectedError{Reason: "PDF needs a user password"}
	case err != nil && !isEncryptionError(err):
		return nil, &steperr.InvalidDocumentError{Reason: err.Error()}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("cannot read PDF: %v", err)}
	}
	data, err := decrypt(ctx, f, size)
	if err != nil {
		return nil, err
	}
	r, err = pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, &steperr.InvalidDocumentError{Reason: "decrypted PDF: " + err.Error()}
	}
	return r, nil
}

// treePage is a leaf of the page tree as the walk reaches it.
type treePage struct {
	dict   pdf.Value
	number int // 1-based
	// resources is the page's /Resources, or the nearest ancestor's the
	// walk came through: following /Parent instead would parse the
	// parent again for every page, and with it a /Kids array that lists
	// every page of a flat tree.
	resources pdf.Value
}

// walkPages walks the page tree once, depth-first, calls visit with each
// leaf, in order, and returns how many there were. Nodes seen before (a
// cycle, or a node listed twice) are skipped; depth and page count are
// bounded. Only the path from the root is held, not the pages visited.
func walkPages(ctx context.Context, r *pdf.Reader, maxPages int, visit func(treePage) error) (int, error) {
	root := r.Trailer().Key("Root").Key("Pages")
	if root.Kind() != pdf.Dict {
		return 0, &steperr.InvalidDocumentError{Reason: "PDF has no page tree"}
	}
	// Without object identities a cycle is still bounded: a tree never
	// holds more nodes than the file has objects.
	budget := int(r.Trailer().Key("Size").Int64()) + 1
	seen := map[uint64]bool{}
	pages := 0
	var walk func(node, resources pdf.Value, depth int) error
	walk = func(node, resources pdf.Value, depth int) error {
		if depth > maxTreeDepth {
			return &steperr.InvalidDocumentError{Reason: fmt.Sprintf("page tree deeper than %d levels", maxTreeDepth)}
		}
		if id, ok := objectID(node); ok {
			if seen[id] {
				return nil
			}
			seen[id] = true
		}
		if budget--; budget < 0 {
			return &steperr.InvalidDocumentError{Reason: "page tree has more nodes than the file has objects (cycle)"}
		}
		if own := node.Key("Resources"); !own.IsNull() {
			resources = own
		}
		kids := node.Key("Kids")
		if node.Key("Type").Name() == "Pages" || kids.Kind() == pdf.Array {
			if pages%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			for i := range kids.Len() {
				kid := kids.Index(i)
				if kid.Kind() != pdf.Dict {
					continue // dangling reference: poppler skips it too
				}
				if err := walk(kid, resources, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		if pages >= maxPages {
			return &steperr.TooLargeError{Reason: fmt.Sprintf("PDF has more than %d pages", maxPages)}
		}
		pages++
		return visit(treePage{dict: node, number: pages, resources: resources})
	}
	if err := walk(root, pdf.Value{}, 0); err != nil {
		return pages, err
	}
	if pages == 0 {
		return 0, &steperr.InvalidDocumentError{Reason: "PDF has no pages"}
	}
	return pages, nil
}

// objectID returns the indirect object number and generation a Value was
// loaded from. The library keeps it unexported; reflection reads it so the
// walk can recognise a node it has visited. ok is false for direct objects
// or if the library's layout changes (the node budget still bounds a cycle).
func objectID(v pdf.Value) (uint64, bool) {
	f := reflect.ValueOf(v).FieldByName("ptr")
	if !f.IsValid() || f.Kind() != reflect.Struct || f.NumField() != 2 {
		return 0, false
	}
	id, gen := f.Field(0), f.Field(1)
	if !id.CanUint() || !gen.CanUint() || id.Uint() == 0 {
		return 0, false
	}
	return id.Uint()<<16 | gen.Uint(), true
}

// pageText assembles one page's text; ok is false when the library
// panicked on the page, and err a TooLargeError when the page is over a
// limit.
func (in *interpreter) pageText(p treePage) (text string, ok bool, err error) {
	defer func() {
		if recover() != nil {
			text, ok, err = "", false, nil
		}
	}()
	glyphs, err := in.page(p)
	if err != nil {
		return "", false, err
	}
	return in.layout.assemble(glyphs), true, nil
}
