package pdftext

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/internal/cpus"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Poppler extracts text with poppler-utils: pdfinfo for the page count and
// pdftotext once per document, or once per page range when a large
// document is split across processes. Stdout is split at form feeds, which
// pdftotext writes after every page, empty ones included.
type Poppler struct {
	// Timeout bounds one document (all its processes). Default: a base
	// time plus a time per page (timeoutFor).
	Timeout time.Duration
	// MemoryLimit caps each process's address space in bytes (ulimit -v),
	// so a hostile file cannot take the machine down. Default 2 GiB; <0 off.
	MemoryLimit int64
	// Parallel is how many pdftotext processes split a large document.
	// Default: one page range per usable processor (two halves measured ~2x
	// one process on two cores).
	Parallel int
	// MinPagesPerProcess keeps small documents in one process. Default 200.
	MinPagesPerProcess int
	// Mode is the pdftotext text mode flag: "" (reading order, default),
	// "-raw" or "-layout". Reading order gave the best word accuracy on
	// generated and real documents; -layout pads columns with spaces and
	// -raw follows content-stream order.
	Mode string

	small smallDocs // documents waiting to share their processes (join.go)
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

// Without a Timeout, a document gets a base time and a time per page, up
// to a cap: pdftotext reads hundreds of pages a second, so a page that
// takes seconds is a bomb (a form drawn millions of times), and its
// document fails as too large within a minute rather than ten.
const (
	baseTimeout    = 10 * time.Second
	perPageTimeout = 100 * time.Millisecond
	maxTimeout     = 10 * time.Minute
)

// timeoutFor is the time a document of pages pages may take (0: not
// counted yet, as for pdfinfo).
func (p *Poppler) timeoutFor(pages int) time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return min(maxTimeout, baseTimeout+time.Duration(pages)*perPageTimeout)
}

// withDeadline bounds ctx by d, with a cause that says it was ours.
func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, &timeoutError{after: d})
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
	return cpus.Usable()
}

func (p *Poppler) minPages() int {
	if p.MinPagesPerProcess > 0 {
		return p.MinPagesPerProcess
	}
	return 200
}

// Pages returns the document's page count: read in process for a small
// file (claimedPages), else by pdfinfo, so that a small document costs one
// process (its pdftotext) rather than two.
func (p *Poppler) Pages(ctx context.Context, path string) (int, error) {
	if err := checkFile(path); err != nil {
		return 0, err
	}
	ctx, cancel := withDeadline(ctx, p.timeoutFor(0))
	defer cancel()
	if n, ok := claimedPages(ctx, path); ok {
		return n, nil
	}
	return p.pdfinfoPages(ctx, path)
}

// pdfinfoPages runs pdfinfo and returns the page count it reports.
func (p *Poppler) pdfinfoPages(ctx context.Context, path string) (int, error) {
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
	return extract.Collect(ctx, p.StreamPages, path, limits) // ranges run in parallel: pages arrive in any order
}

var _ extract.CountedPageStreamer = (*Poppler)(nil)

// StreamPages runs one pdftotext per page range, the ranges in parallel,
// and emits each page as soon as its form feed arrives.
func (p *Poppler) StreamPages(ctx context.Context, path string, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
	return p.streamPages(ctx, path, 0, limits, emit)
}

// StreamCountedPages is StreamPages for a document whose pages the caller
// has counted (with Pages): it runs no pdfinfo of its own.
func (p *Poppler) StreamCountedPages(ctx context.Context, path string, pages int, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
	if pages < 1 {
		return 0, fmt.Errorf("pdftext: a counted document has at least one page, not %d", pages)
	}
	return p.streamPages(ctx, path, pages, limits, emit)
}

// streamPages splits the document's n pages into ranges (n = 0: count
// them first). The last range runs to the document's end rather than to
// page n, so a count that is wrong fails the extraction (see the check
// below) instead of leaving pages out.
func (p *Poppler) streamPages(ctx context.Context, path string, n int, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
	limits = limits.WithDefaults()
	if n == 0 {
		var err error
		if n, err = p.Pages(ctx, path); err != nil {
			return 0, err
		}
	} else if err := checkFile(path); err != nil {
		return 0, err
	}
	if n > limits.MaxPages {
		return 0, &steperr.TooLargeError{Reason: fmt.Sprintf("PDF has %d pages, limit is %d", n, limits.MaxPages)}
	}
	if joinable(path, n) {
		units, err := p.extractSmall(ctx, path, n, limits)
		if err != nil {
			return 0, err
		}
		for _, u := range units {
			if err := emit(u); err != nil {
				return 0, err
			}
		}
		return n, nil
	}
	if err := p.extractRanges(ctx, path, n, limits, emit); err != nil {
		return 0, err
	}
	return n, nil
}

// extractRanges runs pdftotext on the document's n pages, in ranges run in
// parallel when the document is large.
func (p *Poppler) extractRanges(ctx context.Context, path string, n int, limits extract.Limits, emit func(extract.Unit) error) error {
	ctx, cancel := withDeadline(ctx, p.timeoutFor(n))
	defer cancel()

	procs := max(1, min(p.parallel(), n/p.minPages()))
	var mu sync.Mutex // emit is not called concurrently
	g, gctx := errgroup.WithContext(ctx)
	for i := range procs {
		first, last := i*n/procs+1, (i+1)*n/procs
		g.Go(func() error {
			end := 0 // the document's end
			if i < procs-1 {
				end = last
			}
			page := first
			err := p.stream(gctx, "pdftotext", p.textArgs(path, first, end), func(stdout io.Reader) error {
				r := bufio.NewReaderSize(stdout, 256<<10)
				for {
					text, err := readPage(r, limits.MaxPageGlyphs)
					if errors.Is(err, io.EOF) {
						// Every page ends with a form feed, so only
						// whitespace may follow the last one.
						if strings.TrimSpace(text) != "" {
							page++
						}
						return nil
					}
					if err != nil {
						return err
					}
					if page > last {
						page++
						continue // counted for the error below
					}
					mu.Lock()
					err = emit(pageUnit(page, strings.TrimSuffix(text, "\f")))
					mu.Unlock()
					if err != nil {
						return err
					}
					page++
				}
			})
			if err != nil {
				return err
			}
			if page != last+1 {
				return &steperr.InvalidDocumentError{Reason: fmt.Sprintf(
					"pdftotext returned %d pages for pages %d-%d", page-first, first, last)}
			}
			return nil
		})
	}
	return g.Wait()
}

// textArgs are pdftotext's arguments to write pages first to last (0: the
// document's end) of path to stdout.
func (p *Poppler) textArgs(path string, first, last int) []string {
	args := []string{"-q", "-enc", "UTF-8", "-f", strconv.Itoa(first)}
	if last > 0 {
		args = append(args, "-l", strconv.Itoa(last))
	}
	if p.Mode != "" {
		args = append(args, p.Mode)
	}
	return append(args, path, "-")
}

// readPage reads one page of pdftotext's output, up to and including its
// form feed, failing as too large past maxChars characters (as the pure-Go
// backend does), so a page that holds a bomb's worth of text is never held
// whole.
func readPage(r *bufio.Reader, maxChars int) (string, error) {
	var page []byte
	for {
		chunk, err := r.ReadSlice('\f')
		page = append(page, chunk...)
		// A character takes at least one byte: count only when the bytes
		// could be over.
		if len(page) > maxChars && utf8.RuneCount(bytes.TrimSuffix(page, []byte{'\f'})) > maxChars {
			return "", &steperr.TooLargeError{Reason: fmt.Sprintf("a PDF page holds more than %d characters", maxChars)}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return string(page), err
	}
}

// run executes a poppler tool under the memory limit and returns its
// stdout.
func (p *Poppler) run(ctx context.Context, tool string, args ...string) ([]byte, error) {
	var out []byte
	err := p.stream(ctx, tool, args, func(stdout io.Reader) error {
		var err error
		out, err = io.ReadAll(stdout)
		return err
	})
	return out, err
}

// stream executes a poppler tool under the memory limit, hands its stdout
// to read while it runs, and maps failures onto step errors. An error from
// read kills the tool and is returned as it is.
func (p *Poppler) stream(ctx context.Context, tool string, args []string, read func(io.Reader) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := limitedCommand(ctx, p.memoryLimit(), tool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return &steperr.TransientError{Reason: fmt.Sprintf("running %s: %v", tool, err)}
	}
	if err := startLimited(cmd, p.memoryLimit()); err != nil {
		if ctx.Err() != nil {
			return p.contextError(ctx, tool)
		}
		return classify(tool, "", err)
	}
	readErr := read(stdout)
	if readErr != nil {
		cancel() // stop the tool; its exit status no longer matters
	} else {
		_, _ = io.Copy(io.Discard, stdout) // let it finish writing
	}
	err = cmd.Wait()
	switch {
	case readErr != nil && ctx.Err() != nil && context.Cause(ctx) != context.Canceled:
		return p.contextError(ctx, tool)
	case readErr != nil:
		return readErr
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return p.contextError(ctx, tool)
	}
	return classify(tool, stderr.String(), err)
}

// timeoutError is the cause of our own per-document deadline, told apart
// from the caller's cancellation or deadline (which pass through
// unchanged).
type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("pdftext: document timeout after %v", e.after)
}

func (p *Poppler) contextError(ctx context.Context, tool string) error {
	var timeout *timeoutError
	if errors.As(context.Cause(ctx), &timeout) {
		return &steperr.TooLargeError{Reason: fmt.Sprintf("%s took longer than %v", tool, timeout.after)}
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
			if msg == "" {
				// pdftotext runs quiet (-q), so it often says nothing.
				msg = "it is damaged or not a PDF"
			}
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

// lastLines is the last n distinct lines of a tool's messages, in
// order: poppler often says the same thing twice, and a reason that
// repeats itself reads as two problems.
func lastLines(s string, n int) string {
	var out []string
	seen := map[string]bool{}
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
	}
	slices.Reverse(out)
	return strings.Join(out, "; ")
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
