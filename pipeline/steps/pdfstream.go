package steps

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// streamSource is an extractor that streams units, as format_parser
// sees it.
type streamSource struct {
	name   string // for errors: the PDF extractor's name, or the format
	stream extract.UnitStreamer
	// total is the number of units when known before extraction (PDF
	// pages, counted by segment_prep), else 0.
	total int
	// unit is the progress unit ("pages"); "" names it after the first
	// unit's kind, for a format that may come out as pages or sections.
	unit string
}

// pdfSource is a PDF extractor that streams pages. One that can be told
// the page count segment_prep found is told it, rather than counting the
// pages again.
func pdfSource(x extract.PageStreamer, prep prepInfo) streamSource {
	stream := x.StreamPages
	if c, ok := x.(extract.CountedPageStreamer); ok && prep.Pages > 0 {
		stream = func(ctx context.Context, path string, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
			return c.StreamCountedPages(ctx, path, prep.Pages, limits, emit)
		}
	}
	return streamSource{name: x.Name(), stream: stream, total: prep.Pages, unit: "pages"}
}

// parseStreamed is format_parser for an extractor that streams units:
// each unit's text blob is written while later ones are still being
// extracted, so storage overlaps extraction instead of following it and
// the document's text is never held whole. It writes and returns what the
// buffered path does.
//
// For flowing text the number of sections is known only at the end, so
// progress counts against a total of 0 (unknown: readers show no ratio)
// until then, rather than a guess from the file size that would be in
// another unit and wrong for every encoding and layout.
func (h *handlers) parseStreamed(ctx context.Context, in pipeline.StepInput, prep prepInfo, path string, src streamSource) (outcome, error) {
	limits := h.Limits.WithDefaults()
	var infos []unitInfo
	lang := newLanguageSample()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.parallelism() * 4) // blob writes wait on I/O, not CPU
	// One unit is done when its text is stored (or left to OCR). The
	// recorder is made at the first unit, which names the unit when the
	// source does not; emit is never called concurrently.
	var progress *pipeline.ProgressRecorder
	n, err := src.stream(gctx, path, limits, func(u extract.Unit) error {
		if u.Index < 1 || u.Index > limits.MaxPages {
			return &steperr.TooLargeError{Reason: fmt.Sprintf("%s %d, the limit is %d", u.Kind, u.Index, limits.MaxPages)}
		}
		if progress == nil {
			unit := src.unit
			if unit == "" {
				unit = u.Kind + "s"
			}
			progress = h.Repo.NewProgressRecorder(in.Workflow.WorkflowID, in.Step, src.total, unit)
		}
		if u.Index > len(infos) {
			infos = append(infos, make([]unitInfo, u.Index-len(infos))...)
		}
		infos[u.Index-1] = unitInfo{Index: u.Index, Kind: u.Kind, Chars: len(u.Text), NeedsOCR: u.NeedsOCR}
		lang.add(u)
		if u.NeedsOCR {
			progress.Add(gctx, 1)
			return nil
		}
		key := pipeline.SegmentTextBlobKey(in.Workflow, u.Index)
		text := u.Text
		// Go waits while the writes in flight are at the limit: the
		// extractor runs at most that far ahead of storage.
		g.Go(func() error {
			if err := blob.PutBytes(gctx, h.Blobs, key, []byte(text)); err != nil {
				return storageErr("write segment text", err)
			}
			progress.Add(gctx, 1)
			return nil
		})
		return nil
	})
	// A failed blob write cancels the extraction: report the write.
	if werr := g.Wait(); werr != nil {
		err = werr
	}
	if err != nil {
		return outcome{}, err
	}
	if n != len(infos) {
		return outcome{}, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("%s returned %d of %d units", src.name, len(infos), n)}
	}
	if n == 0 {
		return outcome{}, &steperr.InvalidDocumentError{Reason: "the document contains no text"}
	}
	if src.total == 0 {
		progress.Set(ctx, n, n) // the total is known now
	}
	progress.Finish(ctx)
	doc := &pipeline.DocAttrs{Format: string(prep.Format), Language: lang.detect(), Pages: n}
	if err := h.putJSON(ctx, pipeline.DocAttrsBlobKey(in.Workflow), doc); err != nil {
		return outcome{}, err
	}
	if err := h.putJSON(ctx, pipeline.UnitsBlobKey(in.Workflow), infos); err != nil {
		return outcome{}, err
	}
	return outcome{message: fmt.Sprintf("%d %ss", n, infos[0].Kind), doc: doc, info: &pipeline.WorkflowInfo{TotalSegments: &n}}, nil
}

// languageSample gathers the document's first languageSampleBytes of text
// in page order from pages that arrive in any order (sections arrive in
// order). It keeps a page that
// arrived early only until the pages before it are in, and none once the
// sample is full.
type languageSample struct {
	next    int // the next page in order, 1-based
	size    int // bytes detectLanguage reads from head
	head    []extract.Unit
	waiting map[int]extract.Unit
}

func newLanguageSample() *languageSample {
	return &languageSample{next: 1, waiting: map[int]extract.Unit{}}
}

func (l *languageSample) full() bool { return l.size >= languageSampleBytes }

func (l *languageSample) add(u extract.Unit) {
	if l.full() {
		return
	}
	l.waiting[u.Index] = u
	for !l.full() {
		w, ok := l.waiting[l.next]
		if !ok {
			return
		}
		delete(l.waiting, l.next)
		l.head = append(l.head, w)
		l.size += len(w.Text)
		l.next++
	}
	clear(l.waiting)
}

func (l *languageSample) detect() string { return detectLanguage(l.head) }
