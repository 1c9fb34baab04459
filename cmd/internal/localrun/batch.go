package localrun

import (
	"context"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// Outcome is what became of one source (a file or a URL) of a batch.
type Outcome struct {
	File         string
	Registration pipeline.Registration
	// NotProcessed is why the source was not registered (a URL that could
	// not be fetched); "" when it was.
	NotProcessed string
	// Start and End are when its workflow ran here; zero when it did not
	// run in this batch (it had ended before).
	Start, End time.Time
	// Err is how the workflow's execution ended, when it ended with an
	// error: the reason to give when it left the workflow unfinished.
	Err error
}

// Process registers every source (reusing the analysis of content seen
// before), runs the unfinished workflows on the scheduler and returns one
// outcome per source, in order. Registering and running overlap: each
// workflow starts as soon as its source is registered, so a folder of many
// small files does not wait for the last one to be stored before the first
// is analysed (see registerAll).
func (rt *Runtime) Process(ctx context.Context, sources []string) ([]*Outcome, error) {
	outcomes := make([]*Outcome, len(sources))
	registered := make(chan *Outcome, 64)
	var registerErr error // set before registered is closed
	go func() {
		defer close(registered)
		registerErr = rt.registerAll(ctx, sources, outcomes, registered)
	}()

	// Two files with the same bytes share one workflow: run it once.
	started := map[string]bool{}
	var mu sync.Mutex // guards the outcomes' Start and End
	var startErr error
	for o := range registered {
		wf := o.Registration.Workflow
		if started[wf.ID] || wf.Status.Final() {
			continue
		}
		started[wf.ID] = true
		err := rt.Start(ctx, Job{File: o.File, Workflow: wf, Size: o.Registration.Document.Size}, func(e Ended) {
			mu.Lock()
			o.Start, o.End, o.Err = e.Start, e.End, e.Err
			mu.Unlock()
		})
		if err != nil {
			startErr = err // cancelled, or the size unreadable
			break
		}
	}
	for range registered {
		// Left by a stopped loop: let the registrar finish its send.
	}
	rt.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if startErr != nil {
		return nil, startErr
	}
	if registerErr != nil {
		// The workflows registered before the failure have run; the
		// files after it were not registered.
		return nil, registerErr
	}
	return outcomes, nil
}

// Register registers every source without running anything and returns
// one outcome per source, in order.
func (rt *Runtime) Register(ctx context.Context, sources []string) ([]*Outcome, error) {
	outcomes := make([]*Outcome, len(sources))
	registered := make(chan *Outcome)
	var registerErr error // set before registered is closed
	go func() {
		defer close(registered)
		registerErr = rt.registerAll(ctx, sources, outcomes, registered)
	}()
	for range registered {
	}
	if registerErr != nil {
		return nil, registerErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return outcomes, nil
}
