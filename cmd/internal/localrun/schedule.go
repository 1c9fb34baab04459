package localrun

import (
	"context"
	"errors"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// Job is one workflow to drive to its end.
type Job struct {
	File     string // what the observer calls it
	Workflow pipeline.Workflow
	// Size is the document's, which weighs the job on the slots; 0 has
	// the runtime read it from the document item.
	Size int64
}

// Ended is how a started job ended: when it ran, and the engine's error
// (a failed document is recorded in the table, not here).
type Ended struct {
	Start, End time.Time
	Err        error
}

// Start is the one scheduler: it waits for room on the slots for j's
// document, then runs j in the background and hands ended how it ended
// (ended may be nil). It returns an error, and starts nothing, when ctx
// ends first or the document's size cannot be read.
func (rt *Runtime) Start(ctx context.Context, j Job, ended func(Ended)) error {
	size, err := rt.size(ctx, j)
	if err == nil {
		err = rt.slots.acquire(ctx, size)
	}
	if err != nil {
		rt.admission.Drop(j.Workflow) // it will not run
		return err
	}
	rt.running.Add(1)
	go func() {
		defer rt.running.Done()
		defer rt.slots.release(size)
		e := Ended{Start: time.Now()}
		if rt.o.Observer != nil {
			rt.o.Observer.Track(j.File, j.Workflow)
		}
		e.Err = rt.runWorkflow(ctx, j.Workflow)
		e.End = time.Now()
		if rt.o.Observer != nil {
			rt.o.Observer.Done(j.Workflow.ID)
		}
		if e.Err != nil && ctx.Err() == nil {
			rt.o.Logger.Debug("execution ended with an error", "file", j.File, "workflow", j.Workflow.ID, "error", e.Err)
		}
		if ended != nil {
			ended(e)
		}
	}()
	return nil
}

// Wait waits for every started job to end.
func (rt *Runtime) Wait() { rt.running.Wait() }

// size is j's document size: a workflow taken up again knows only its
// document's id. A document item that is gone weighs a whole slot.
func (rt *Runtime) size(ctx context.Context, j Job) (int64, error) {
	if j.Size > 0 {
		return j.Size, nil
	}
	doc, err := rt.repo.GetDocument(ctx, j.Workflow.ProjectID, j.Workflow.DocumentID)
	switch {
	case errors.Is(err, pipeline.ErrNotFound):
		return SlotShares * SmallDocBytes, nil
	case err != nil:
		return 0, err
	}
	return doc.Size, nil
}
