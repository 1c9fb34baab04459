package ocr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Renderer turns one PDF page into a PNG with `pdftoppm -r DPI -f N -l N
// -png`. Safe for concurrent use.
type Renderer struct {
	Binary  string        // command name or path; default "pdftoppm"
	DPI     int           // default 150: enough for tesseract on body text
	Timeout time.Duration // per page; default 30 s (a page takes well under one)

	once   sync.Once
	ok     bool
	reason string
}

var defaultRenderer = &Renderer{}

// RenderPDFPage renders page (1-based) of a PDF into outDir with the
// default Renderer and returns the PNG's path.
func RenderPDFPage(ctx context.Context, pdfPath string, page int, outDir string) (string, error) {
	return defaultRenderer.Render(ctx, pdfPath, page, outDir)
}

// Available reports whether pdftoppm can be run, and why not.
func (r *Renderer) Available() (bool, string) {
	r.once.Do(func() {
		if _, err := exec.LookPath(cmp(r.Binary, "pdftoppm")); err != nil {
			r.reason = ReasonNoPdftoppm
			return
		}
		r.ok = true
	})
	return r.ok, r.reason
}

// maxSide bounds the rendered image in pixels on each side (40 inches at
// 150 DPI): a page whose box is the size of a field renders cropped, not
// as gigabytes of pixels.
const maxSide = "6000"

// Render writes page-NNNNNN.png into outDir. A page past the end of the
// document or an unreadable PDF is an InvalidDocumentError, a PDF that
// needs a password a PasswordProtectedError.
func (r *Renderer) Render(ctx context.Context, pdfPath string, page int, outDir string) (string, error) {
	if page < 1 {
		return "", &steperr.InvalidInputError{Reason: fmt.Sprintf("page %d: pages count from 1", page)}
	}
	if ok, reason := r.Available(); !ok {
		return "", &UnavailableError{Reason: reason}
	}
	abs, err := filepath.Abs(pdfPath)
	if err != nil {
		return "", err
	}
	dpi := r.DPI
	if dpi <= 0 {
		dpi = 150
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	prefix := filepath.Join(outDir, fmt.Sprintf("page-%06d", page))
	n := strconv.Itoa(page)
	_, stderr, err := run(ctx, timeout, cmp(r.Binary, "pdftoppm"),
		[]string{"-r", strconv.Itoa(dpi), "-W", maxSide, "-H", maxSide, "-f", n, "-l", n, "-png", "-singlefile", abs, prefix}, nil)
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("ocr: render page %d: %w", page, err)
		}
		msg := firstLine(stderr)
		switch {
		case strings.Contains(stderr, "Incorrect password"):
			return "", &steperr.PasswordProtectedError{Reason: "the PDF needs a password to render"}
		case strings.Contains(stderr, "Wrong page range"):
			return "", &steperr.InvalidDocumentError{Reason: fmt.Sprintf("page %d does not exist: %s", page, msg)}
		}
		return "", &steperr.InvalidDocumentError{Reason: "pdftoppm cannot render the PDF: " + msg}
	}
	out := prefix + ".png"
	if _, err := os.Stat(out); err != nil {
		return "", &steperr.InvalidDocumentError{Reason: fmt.Sprintf("pdftoppm wrote no image for page %d: %s", page, firstLine(stderr))}
	}
	return out, nil
}
