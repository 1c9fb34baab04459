package pdftext

import (
	"context"

	"github.com/ledongthuc/pdf"
	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// Pages of one document are extracted by several workers at once: one
// goroutine walks the page tree and hands each page out as it reaches it,
// the workers (each with its own interpreter, so its own font cache)
// extract whichever page comes next, and the pages are emitted in order.
// The library's Reader is not changed after it is opened and reads the
// file with ReadAt, so the workers share it.

// pagesAhead is how many pages per worker may be handed out, or done and
// waiting for an earlier page, before the walk waits: enough to keep the
// workers busy past a slow page, few enough to bound memory.
const pagesAhead = 4

// pageJob is one page handed out; its worker answers on done.
type pageJob struct {
	page treePage
	done chan pageResult // buffered: a worker never waits on it
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
	// No more workers than the document says it has pages (a /Count
	// that lies costs speed here, never pages).
	workers := min(g.parallel(), max(1, int(r.Trailer().Key("Root").Key("Pages").Key("Count").Int64())))
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
	order := make(chan *pageJob, workers*pagesAhead) // handed out, not yet emitted
	jobs := make(chan *pageJob)
	var pages int
	var walkErr error
	var wg errgroup.Group
	wg.Go(func() error {
		defer close(order)
		defer close(jobs)
		pages, walkErr = walkPages(ctx, r, limits.MaxPages, func(page treePage) error {
			j := &pageJob{page: page, done: make(chan pageResult, 1)}
			// Into the order first: the walk waits here while the
			// emitter is pagesAhead pages per worker behind.
			for _, ch := range []chan *pageJob{order, jobs} {
				select {
				case ch <- j:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
		return nil
	})
	for range workers {
		wg.Go(func() error {
			in := newInterpreter(limits)
			for j := range jobs {
				var res pageResult
				if ctx.Err() == nil {
					res.text, res.ok, res.err = in.pageText(j.page)
				} else {
					res.err = ctx.Err()
				}
				j.done <- res
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

// emitInOrder emits the pages of order as they are done, in order, until
// order is closed or a page or emit fails.
func emitInOrder(ctx context.Context, order <-chan *pageJob, emit func(u extract.Unit, ok bool) error) error {
	for j := range order {
		var res pageResult
		select {
		case res = <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if res.err != nil {
			return res.err
		}
		if err := emit(pageUnit(j.page.number, res.text), res.ok); err != nil {
			return err
		}
	}
	return ctx.Err()
}
