// Package ocr recognises text in images by running the tesseract command
// (no cgo), and renders PDF pages to images with poppler's pdftoppm so that
// scanned pages can be recognised too. Both tools are optional: an engine
// that cannot run says why, in a reason fit to show as "OCR skipped: ...".
package ocr

import (
	"bytes"
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

	"github.com/docpipe/docpipe/pipeline/childenv"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/steperr"

	"github.com/docpipe/docpipe/internal/childproc"
)

// Engine recognises the text of one image file.
type Engine interface {
	Name() string
	// Available reports whether Recognize can work; when it cannot, reason
	// says why and how to fix it.
	Available() (ok bool, reason string)
	Recognize(ctx context.Context, imagePath string) (string, error)
}

// Reasons given when a tool is missing.
const (
	ReasonNoTesseract = "OCR skipped: tesseract is not installed (apt-get install tesseract-ocr)"
	ReasonNoPdftoppm  = "OCR skipped: pdftoppm is not installed (apt-get install poppler-utils)"
)

// UnavailableError is returned by Recognize and Render when the tool they
// need cannot run. Callers mark the work skipped with Reason rather than
// failing it.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return e.Reason }

// Unavailable is an Engine that never runs, for configurations without
// OCR; Reason says why (for example "OCR skipped: disabled by --no-ocr").
type Unavailable struct{ Reason string }

func (u Unavailable) Name() string              { return "none" }
func (u Unavailable) Available() (bool, string) { return false, u.Reason }
func (u Unavailable) Recognize(context.Context, string) (string, error) {
	return "", &UnavailableError{Reason: u.Reason}
}

// Tesseract runs `tesseract IMAGE stdout --psm 3 -l eng` with
// OMP_THREAD_LIMIT=1: one thread per image, parallelism comes from
// recognising several pages at once. Use NewTesseract or set fields before
// the first call; it is safe for concurrent use.
type Tesseract struct {
	Binary  string        // command name or path; default "tesseract"
	Lang    string        // language data; default "eng"
	PSM     int           // page segmentation mode; default 3 (automatic)
	Timeout time.Duration // per image; default 2 minutes

	once   sync.Once
	ok     bool
	reason string
}

// NewTesseract returns the default Tesseract engine.
func NewTesseract() *Tesseract { return &Tesseract{} }

// Name is "tesseract".
func (t *Tesseract) Name() string { return "tesseract" }

func (t *Tesseract) binary() string { return cmp(t.Binary, "tesseract") }
func (t *Tesseract) lang() string   { return cmp(t.Lang, "eng") }

func cmp(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Available finds the binary and checks that it has the language data.
// The answer is computed once.
func (t *Tesseract) Available() (bool, string) {
	t.once.Do(func() {
		bin, err := exec.LookPath(t.binary())
		if err != nil {
			t.reason = ReasonNoTesseract
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--list-langs")
		childproc.Tie(cmd)
		cmd.Env = toolEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.reason = fmt.Sprintf("OCR skipped: %s --list-langs failed: %v", bin, err)
			return
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.TrimSpace(line) == t.lang() {
				t.ok = true
				return
			}
		}
		t.reason = fmt.Sprintf("OCR skipped: tesseract has no %q language data (apt-get install tesseract-ocr-%s)", t.lang(), t.lang())
	})
	return t.ok, t.reason
}

// maxOCRText bounds what one image may return: a dense page holds tens of
// KB, so past this the image is a bomb (a page of tiny glyphs), and its
// text would cost the analysis far more than the page is worth.
const maxOCRText = 1 << 20

// Recognize returns the text tesseract finds in an image, cleaned to
// UTF-8 with LF newlines. An image tesseract cannot read is an
// InvalidDocumentError; a missing tool is an UnavailableError; running
// past the timeout wraps context.DeadlineExceeded (worth a retry).
func (t *Tesseract) Recognize(ctx context.Context, imagePath string) (string, error) {
	if ok, reason := t.Available(); !ok {
		return "", &UnavailableError{Reason: reason}
	}
	abs, err := filepath.Abs(imagePath) // a relative name starting with "-" would read as a flag
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", err
	}
	psm := t.PSM
	if psm == 0 {
		psm = 3
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	stdout, stderr, err := run(ctx, timeout, t.binary(),
		[]string{abs, "stdout", "--psm", strconv.Itoa(psm), "-l", t.lang()},
		[]string{"OMP_THREAD_LIMIT=1"})
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", &steperr.InvalidDocumentError{Reason: "tesseract cannot read the image: " + firstLine(stderr)}
		}
		return "", fmt.Errorf("ocr: tesseract on %s: %w", filepath.Base(abs), err)
	}
	return strings.TrimSpace(plaintext.Clean(stdout)), nil
}

// toolEnv is tesseract's environment: none of docpipe's credentials,
// the variable that says where its language data is when the user set
// it, and own.
func toolEnv(own ...string) []string {
	return childenv.Minimal([]string{"TESSDATA_PREFIX"}, own...)
}

// run executes a tool with a timeout and bounded output. A timeout comes
// back wrapping context.DeadlineExceeded, the caller's own cancellation
// as the caller's context error.
func run(ctx context.Context, timeout time.Duration, bin string, args, env []string) (string, string, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, args...)
	childproc.Tie(cmd)
	cmd.Env = toolEnv(env...)
	cmd.WaitDelay = 5 * time.Second // do not hang on pipes a killed child left open
	stdout := &capped{max: maxOCRText}
	stderr := &capped{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", "", ctxErr
		}
		if runCtx.Err() != nil {
			return "", "", fmt.Errorf("%s timed out after %s: %w", filepath.Base(bin), timeout, context.DeadlineExceeded)
		}
		return stdout.String(), stderr.String(), err
	}
	if stdout.over {
		return "", "", &steperr.TooLargeError{Reason: fmt.Sprintf("%s printed more than %d bytes", filepath.Base(bin), stdout.max)}
	}
	return stdout.String(), stderr.String(), nil
}

// capped is a buffer that keeps at most max bytes and notes the overflow.
// It holds its bytes.Buffer in a field, not embedded: an embedded one
// would lend capped its ReadFrom, which io.Copy (and so exec, copying a
// tool's output) prefers to Write, and which knows no cap.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) String() string { return c.buf.String() }

// firstLine returns the first meaningful line of a tool's error output.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		// tesseract's progress notes are not the error
		if l == "" || strings.HasPrefix(l, "Estimating resolution") || strings.HasPrefix(l, "Tesseract Open Source") {
			continue
		}
		return l
	}
	return "no error message"
}
