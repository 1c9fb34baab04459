package pdftext

import (
	"context"

	"github.com/ledongthuc/pdf"
	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// Pages of one document are extracted by several workers at once: one
// goroutine walks the page tree and hands out ranges of consecutive pages
// as it reaches them, the workers (each with its own interpreter, so its
// own font cache) extract whichever range comes next, and the pages are
// emitted in order. Ranges rather than single pages, because every hand
// over between goroutines may wake a thread, which on a busy machine
// waits for the scheduler. The library's Reader is not changed after it
// is opened and reads the file with ReadAt, so the workers share it.
const (
	// rangePages is how many consecutive pages a worker takes at once.
	rangePages = 8
	// rangesAhead is how many ranges per worker may be handed out, or
	// done and waiting for an earlier one, before the walk waits: enough
	// to keep the workers busy past a slow page, few enough to bound
	// memory.
	rangesAhead = 2
)

// pageRange is pages handed out together; its worker answers on done.
type pageRange struct {
	pages []treePage
	done  chan []pageResult // buffered: a worker never waits on it
}

type pageResult struct {
	text string
	ok   bool // false: the library panicked on the page
	err  error
}

// extractPages walks the page tree of r, extracts each page, and calls
// emit with the pages in order (ok false for a page the library could not
// read). It returns the number of pages; an error from a page, from the
// walk or from emit stops it, after the pages before the fault were
// emitted.
func (g *PureGo) extractPages(ctx context.Context, r *pdf.Reader, limits extract.Limits, emit func(u extract.Unit, ok bool) error) (int, error) {
	// No more workers than the document says it has ranges (a /Count
	// that lies costs speed here, never pages).
	claimed := int(r.Trailer().Key("Root").Key("Pages").Key("Count").Int64())
	workers := min(g.parallel(), max(1, (claimed+rangePages-1)/rangePages))
	if workers <= 1 {
		in := newInterpreter(limits)
		return walkPages(ctx, r, limits.MaxPages, func(page treePage) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			text, ok, err := in.pageText(page)
			if err != nil {
				return err
			}
			return emit(pageUnit(page.number, text), ok)
		})
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	order := make(chan *pageRange, workers*rangesAhead) // handed out, not yet emitted
	jobs := make(chan *pageRange)
	handOut := func(pages []treePage) error {
		j := &pageRange{pages: pages, done: make(chan []pageResult, 1)}
		// Into the order first: the walk waits here while the emitter
		// is rangesAhead ranges per worker behind.
		for _, ch := range []chan *pageRange{order, jobs} {
			select {
			case ch <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	var pages int
	var walkErr error
	var wg errgroup.Group
	wg.Go(func() error {
		defer close(order)
		defer close(jobs)
		var batch []treePage
		pages, walkErr = walkPages(ctx, r, limits.MaxPages, func(page treePage) error {
			if batch = append(batch, page); len(batch) < rangePages {
				return nil
			}
			err := handOut(batch)
			batch = nil
			return err
		})
		if len(batch) > 0 && ctx.Err() == nil {
			// The pages before a fault of the walk are extracted too.
			_ = handOut(batch)
		}
		return nil
	})
	for range workers {
		wg.Go(func() error {
			in := newInterpreter(limits)
			for j := range jobs {
				j.done <- in.pageTexts(ctx, j.pages)
			}
			return nil
		})
	}
	err := emitInOrder(ctx, order, emit)
	cancel() // on an error, stop the walk and the workers
	wg.Wait()
	if err != nil {
		return 0, err
	}
	return pages, walkErr
}

// pageTexts extracts pages one after the other, up to the first that
// fails.
func (in *interpreter) pageTexts(ctx context.Context, pages []treePage) []pageResult {
	out := make([]pageResult, 0, len(pages))
	for _, p := range pages {
		var res pageResult
		if res.err = ctx.Err(); res.err == nil {
			res.text, res.ok, res.err = in.pageText(p)
		}
		out = append(out, res)
		if res.err != nil {
			break
		}
	}
	return out
}

// emitInOrder emits the pages of the ranges of order as they are done, in
// order, until order is closed or a page or emit fails.
func emitInOrder(ctx context.Context, order <-chan *pageRange, emit func(u extract.Unit, ok bool) error) error {
	for j := range order {
		var results []pageResult
		select {
		case results = <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		for i, res := range results {
			if res.err != nil {
				return res.err
			}
			if err := emit(pageUnit(j.pages[i].number, res.text), res.ok); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}
