package pdftext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Poppler extracts text with poppler-utils: pdfinfo for the page count and
// pdftotext once per document, or once per page range when a large
// document is split across processes. Stdout is split at form feeds, which
// pdftotext writes after every page, empty ones included.
type Poppler struct {
	// Timeout bounds one document (all its processes). Default 10 minutes.
	Timeout time.Duration
	// MemoryLimit caps each process's address space in bytes (ulimit -v),
	// so a hostile file cannot take the machine down. Default 2 GiB; <0 off.
	MemoryLimit int64
	// Parallel is how many pdftotext processes split a large document.
	// Default min(2, GOMAXPROCS): two halves measured ~2x one process.
	Parallel int
	// MinPagesPerProcess keeps small documents in one process. Default 200.
	MinPagesPerProcess int
	// Mode is the pdftotext text mode flag: "" (reading order, default),
	// "-raw" or "-layout". Reading order gave the best word accuracy on
	// generated and real documents; -layout pads columns with spaces and
	// -raw follows content-stream order.
	Mode string
}

// NewPoppler returns a poppler extractor with default settings.
func NewPoppler() *Poppler { return &Poppler{} }

// PopplerAvailable reports whether pdftotext and pdfinfo are on PATH.
func PopplerAvailable() bool {
	for _, tool := range []string{"pdftotext", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			return false
		}
	}
	return true
}

func (p *Poppler) Name() string { return "poppler" }

func (p *Poppler) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return 10 * time.Minute
}

func (p *Poppler) memoryLimit() int64 {
	if p.MemoryLimit == 0 {
		return 2 << 30
	}
	return p.MemoryLimit
}

func (p *Poppler) parallel() int {
	if p.Parallel > 0 {
		return p.Parallel
	}
	return min(2, runtime.GOMAXPROCS(0))
}

func (p *Poppler) minPages() int {
	if p.MinPagesPerProcess > 0 {
		return p.MinPagesPerProcess
	}
	return 200
}

// Pages runs pdfinfo and returns the document's page count.
func (p *Poppler) Pages(ctx context.Context, path string) (int, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, p.timeout(), errTimeout)
	defer cancel()
	return p.pages(ctx, path)
}

func (p *Poppler) pages(ctx context.Context, path string) (int, error) {
	if err := checkFile(path); err != nil {
		return 0, err
	}
	out, err := p.run(ctx, "pdfinfo", path)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "Pages:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return 0, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("pdfinfo reported page count %q", strings.TrimSpace(v))}
			}
			if n == 0 {
				return 0, &steperr.InvalidDocumentError{Reason: "PDF has no pages"}
			}
			return n, nil
		}
	}
	return 0, &steperr.InvalidDocumentError{Reason: "pdfinfo reported no page count"}
}

// Extract returns one unit per page.
func (p *Poppler) Extract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	limits = limits.WithDefaults()
	ctx, cancel := context.WithTimeoutCause(ctx, p.timeout(), errTimeout)
	defer cancel()
	n, err := p.pages(ctx, path)
	if err != nil {
		return nil, err
	}
	if n > limits.MaxPages {
		return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("PDF has %d pages, limit is %d", n, limits.MaxPages)}
	}

	procs := max(1, min(p.parallel(), n/p.minPages()))
	texts := make([]string, n)
	g, gctx := errgroup.WithContext(ctx)
	for i := range procs {
		first, last := i*n/procs+1, (i+1)*n/procs
		g.Go(func() error {
			args := []string{"-q", "-enc", "UTF-8", "-f", strconv.Itoa(first), "-l", strconv.Itoa(last)}
			if p.Mode != "" {
				args = append(args, p.Mode)
			}
			out, err := p.run(gctx, "pdftotext", append(args, path, "-")...)
			if err != nil {
				return err
			}
			pages := strings.Split(string(out), "\f")
			// Every page ends with a form feed, so the last piece is empty.
			if len(pages) != last-first+2 || strings.TrimSpace(pages[len(pages)-1]) != "" {
				return &steperr.InvalidDocumentError{Reason: fmt.Sprintf(
					"pdftotext returned %d pages for pages %d-%d", len(pages)-1, first, last)}
			}
			copy(texts[first-1:last], pages)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return units(texts), nil
}

// run executes a poppler tool under the memory limit and maps failures onto
// step errors.
func (p *Poppler) run(ctx context.Context, tool string, args ...string) ([]byte, error) {
	name, argv := tool, args
	if lim := p.memoryLimit(); lim > 0 {
		// ulimit in a shell that then execs the tool: works on any Linux
		// or macOS without util-linux's prlimit or cgo.
		name = "sh"
		argv = append([]string{"-c", `ulimit -v "$0" && exec "$@"`, strconv.FormatInt(lim>>10, 10), tool}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil {
		return nil, p.contextError(ctx, tool)
	}
	return nil, classify(tool, stderr.String(), err)
}

// errTimeout is the cause of our own per-document deadline, told apart from
// the caller's cancellation or deadline (which pass through unchanged).
var errTimeout = errors.New("pdftext: document timeout")

func (p *Poppler) contextError(ctx context.Context, tool string) error {
	if errors.Is(context.Cause(ctx), errTimeout) {
		return &steperr.TooLargeError{Reason: fmt.Sprintf("%s took longer than %v", tool, p.timeout())}
	}
	return ctx.Err()
}

// classify maps a failed poppler run onto step errors by its messages.
func classify(tool, stderr string, err error) error {
	msg := lastLines(stderr, 3)
	switch {
	case strings.Contains(stderr, "Incorrect password"):
		return &steperr.PasswordProtectedError{Reason: "PDF needs a user password"}
	case strings.Contains(stderr, "bad_alloc"), strings.Contains(stderr, "Out of memory"),
		strings.Contains(stderr, "out of memory"), strings.Contains(stderr, "Cannot allocate"),
		strings.Contains(stderr, "cannot allocate memory"), strings.Contains(stderr, "failed to map segment"):
		return &steperr.TooLargeError{Reason: tool + " ran out of memory: " + msg}
	case strings.Contains(stderr, "May not be a PDF file"):
		return &steperr.InvalidDocumentError{Reason: "not a PDF file: " + msg}
	case strings.Contains(stderr, "Couldn't find trailer"), strings.Contains(stderr, "Couldn't read xref"),
		strings.Contains(stderr, "Wrong page range"), strings.Contains(stderr, "Syntax Error"):
		return &steperr.InvalidDocumentError{Reason: "damaged PDF: " + msg}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() == 1 { // pdftotext/pdfinfo: error opening the PDF
			return &steperr.InvalidDocumentError{Reason: fmt.Sprintf("%s could not open the PDF: %s", tool, msg)}
		}
		if !exit.Exited() { // killed by a signal, typically the memory limit
			return &steperr.TooLargeError{Reason: fmt.Sprintf("%s was killed (%v): %s", tool, exit, msg)}
		}
		return &steperr.InvalidDocumentError{Reason: fmt.Sprintf("%s failed (%v): %s", tool, exit, msg)}
	}
	// The tool could not be started at all (missing binary, fork failure):
	// not the document's fault and possibly gone on another attempt.
	return &steperr.TransientError{Reason: fmt.Sprintf("running %s: %v", tool, err)}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// checkFile fails early and clearly on a missing or empty file.
func checkFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return &steperr.InvalidDocumentError{Reason: fmt.Sprintf("cannot read PDF: %v", err)}
	}
	if fi.Size() == 0 {
		return &steperr.InvalidDocumentError{Reason: "PDF is empty"}
	}
	return nil
}
