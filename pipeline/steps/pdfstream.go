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

// parseStreamedPDF is format_parser for an extractor that streams pages:
// each page's text blob is written while later pages are still being
// extracted, so storage overlaps extraction instead of following it. It
// writes and returns what the buffered path does.
func (h *handlers) parseStreamedPDF(ctx context.Context, in pipeline.StepInput, prep prepInfo, path string, x extract.PageStreamer) (outcome, error) {
	limits := h.Limits.WithDefaults()
	var infos []unitInfo
	lang := newLanguageSample()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.parallelism() * 4) // blob writes wait on I/O, not CPU
	// segment_prep counted the pages; one is done when its text is stored
	// (or left to OCR).
	progress := h.Repo.NewProgressRecorder(in.Workflow.WorkflowID, in.Step, prep.Pages, "pages")
	n, err := x.StreamPages(gctx, path, limits, func(u extract.Unit) error {
		if u.Index < 1 || u.Index > limits.MaxPages {
			return &steperr.TooLargeError{Reason: fmt.Sprintf("page %d, the limit is %d", u.Index, limits.MaxPages)}
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
		return outcome{}, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("%s returned %d of %d pages", x.Name(), len(infos), n)}
	}
	if n == 0 {
		return outcome{}, &steperr.InvalidDocumentError{Reason: "the document contains no text"}
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
// in page order from pages that arrive in any order. It keeps a page that
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
