package pdftext

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// Small documents extracted at the same time share their processes:
// pdfunite joins them into one PDF, one pdftotext reads it, and its pages
// go back to each document by its page count. A one-page PDF costs
// pdftotext about 7 ms of processor time, of which loading poppler's
// libraries takes 5 and its tables 1.5; joined, 32 such documents cost
// about 1 ms each. A document waits only while as many processes as there
// are processors already run: what arrived meanwhile is joined next.
const (
	joinMaxPages = 8  // pages of a document that may be joined
	joinMaxDocs  = 32 // documents joined at once
)

// joinableKeys mark what pdfunite drops or changes on the way, or what
// would hide it: encryption (pdfunite refuses it), optional content (its
// visibility decides which text shows), forms (their appearances may be
// made from the document's form dictionary) and object streams, whose
// compressed dictionaries cannot be searched for the others.
var joinableKeys = [][]byte{[]byte("/Encrypt"), []byte("/OCProperties"), []byte("/AcroForm"), []byte("/ObjStm")}

// joinable reports whether the document at path, of pages pages, may be
// joined with others: small, few pages, and outside its streams' bodies
// none of joinableKeys and no name written with # escapes (which could
// spell one of them).
func joinable(path string, pages int) bool {
	if pages < 1 || pages > joinMaxPages {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > countInProcessMaxBytes {
		return false
	}
	data, err := io.ReadAll(io.LimitReader(f, countInProcessMaxBytes+1))
	if err != nil || len(data) > countInProcessMaxBytes {
		return false
	}
	for part := range outsideStreams(data) {
		for _, key := range joinableKeys {
			if bytes.Contains(part, key) {
				return false
			}
		}
		if hasEscapedName(part) {
			return false
		}
	}
	return true
}

// outsideStreams yields data without the bodies of its streams (from a
// dictionary's "stream" keyword to "endstream"), which are compressed or
// drawing instructions, not dictionaries.
func outsideStreams(data []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for from := 0; len(data) > 0; {
			i := bytes.Index(data[from:], []byte("stream"))
			if i < 0 {
				yield(data)
				return
			}
			i += from
			if !startsStream(data, i) {
				from = i + len("stream")
				continue
			}
			if !yield(data[:i]) {
				return
			}
			end := bytes.Index(data[i:], []byte("endstream"))
			if end < 0 {
				return
			}
			data, from = data[i+end+len("endstream"):], 0
		}
	}
}

// startsStream reports whether the "stream" at data[i:] is the keyword
// that starts a stream's body: after a dictionary's ">>" and blanks, and
// followed by an end of line.
func startsStream(data []byte, i int) bool {
	after := data[i+len("stream"):]
	if !bytes.HasPrefix(after, []byte("\n")) && !bytes.HasPrefix(after, []byte("\r\n")) {
		return false
	}
	return bytes.HasSuffix(bytes.TrimRight(data[:i], " \t\r\n\f\x00"), []byte(">>"))
}

// hasEscapedName reports whether data holds a name with a # escape: a #
// after a / with no delimiter between them. Text that merely looks so
// costs the document its joining, never its text.
func hasEscapedName(data []byte) bool {
	inName := false
	for _, c := range data {
		switch {
		case c == '/':
			inName = true
		case c == '#' && inName:
			return true
		case nameEnds[c]:
			inName = false
		}
	}
	return false
}

// nameEnds are the bytes that end a PDF name: white space and delimiters.
var nameEnds = func() (ends [256]bool) {
	for _, c := range []byte("()<>[]{}% \t\r\n\f\x00") {
		ends[c] = true
	}
	return ends
}()

// smallDoc is one document waiting for its pages.
type smallDoc struct {
	ctx    context.Context
	path   string
	pages  int
	limits extract.Limits
	done   chan struct{} // closed when units and err are set
	units  []extract.Unit
	err    error
}

// smallDocs queues small documents and runs them in groups, at most slots
// groups at once and at most most documents a group. Its zero value is
// unset: init sets it once.
type smallDocs struct {
	once  sync.Once
	slots int
	most  int
	run   func([]*smallDoc) // extracts a group; closes each document's done

	mu      sync.Mutex
	waiting []*smallDoc
	running int
}

func (s *smallDocs) init(slots, most int, run func([]*smallDoc)) {
	s.once.Do(func() { s.slots, s.most, s.run = max(1, slots), max(1, most), run })
}

// submit queues d and, when a slot is free, starts a worker that takes
// groups off the queue until it is empty.
func (s *smallDocs) submit(d *smallDoc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting = append(s.waiting, d)
	if s.running < s.slots {
		s.running++
		go s.work()
	}
}

func (s *smallDocs) work() {
	for {
		s.mu.Lock()
		n := min(len(s.waiting), s.most)
		if n == 0 {
			s.running--
			s.mu.Unlock()
			return
		}
		group := make([]*smallDoc, n)
		copy(group, s.waiting)
		s.waiting = s.waiting[n:]
		if len(s.waiting) == 0 {
			s.waiting = nil // let the backing array go
		}
		s.mu.Unlock()
		s.run(group)
	}
}

// extractSmall returns the pages of a joinable document, extracted with
// whatever other small documents wait at the same time.
func (p *Poppler) extractSmall(ctx context.Context, path string, pages int, limits extract.Limits) ([]extract.Unit, error) {
	p.small.init(p.parallel(), joinMaxDocs, p.extractGroup)
	d := &smallDoc{ctx: ctx, path: path, pages: pages, limits: limits, done: make(chan struct{})}
	p.small.submit(d)
	select {
	case <-d.done:
		return d.units, d.err
	case <-ctx.Done():
		return nil, ctx.Err() // the group goes on for the others
	}
}

// extractGroup extracts a group's documents joined, or each on its own
// when there is one, or when the joined run fails: then every document
// gets what its own extraction gives, its own error included.
func (p *Poppler) extractGroup(group []*smallDoc) {
	live := group[:0:0]
	for _, d := range group {
		if err := d.ctx.Err(); err != nil {
			d.err = err
			close(d.done)
			continue
		}
		live = append(live, d)
	}
	if len(live) > 1 && p.extractJoined(live) == nil {
		return
	}
	for _, d := range live {
		d.err = p.extractRanges(d.ctx, d.path, d.pages, d.limits, func(u extract.Unit) error {
			d.units = append(d.units, u)
			return nil
		})
		close(d.done)
	}
}

// extractJoined runs pdfunite and pdftotext on docs and hands each its
// pages. It fails, handing out nothing, when either tool fails or the
// joined document's pages are not the sum of the documents' counts.
func (p *Poppler) extractJoined(docs []*smallDoc) error {
	total, maxChars := 0, 0
	for i, d := range docs {
		total += d.pages
		if i == 0 || d.limits.MaxPageGlyphs < maxChars {
			maxChars = d.limits.MaxPageGlyphs
		}
	}
	// The group's documents may belong to callers that have gone: it runs
	// on its own time, not theirs.
	ctx, cancel := withDeadline(context.Background(), p.timeoutFor(total))
	defer cancel()
	dir, err := os.MkdirTemp("", "docpipe-pdfunite-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	joined := filepath.Join(dir, "joined.pdf")
	args := make([]string, 0, len(docs)+1)
	for _, d := range docs {
		abs, err := filepath.Abs(d.path) // never read as an option
		if err != nil {
			return err
		}
		args = append(args, abs)
	}
	if _, err := p.run(ctx, "pdfunite", append(args, joined)...); err != nil {
		return err
	}
	texts := make([]string, 0, total)
	err = p.stream(ctx, "pdftotext", p.textArgs(joined, 1, 0), func(stdout io.Reader) error {
		r := bufio.NewReaderSize(stdout, 256<<10)
		for {
			text, err := readPage(r, maxChars)
			if errors.Is(err, io.EOF) {
				if strings.TrimSpace(text) != "" {
					return errJoinedPages
				}
				return nil
			}
			if err != nil {
				return err
			}
			if len(texts) == total {
				return errJoinedPages
			}
			texts = append(texts, strings.TrimSuffix(text, "\f"))
		}
	})
	if err != nil {
		return err
	}
	if len(texts) != total {
		return errJoinedPages
	}
	for _, d := range docs {
		d.units = make([]extract.Unit, d.pages)
		for i := range d.units {
			d.units[i] = pageUnit(i+1, texts[i])
		}
		texts = texts[d.pages:]
		close(d.done)
	}
	return nil
}

// errJoinedPages says a joined document's pages were not the sum of its
// parts' counts: the parts are then extracted on their own, where a wrong
// count is the document's error.
var errJoinedPages = errors.New("pdftext: the joined document's pages are not the sum of its parts' counts")
