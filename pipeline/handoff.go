package pipeline

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// A StepHandoff lets a step that has finished leave the record of its
// completion to the next step of the same execution, which writes it in one
// transaction with its own start: "format_parser completed, ocr in
// progress". Where both steps run in one process one after the other (the
// embedded engine), a step then costs one transaction instead of two.
//
// Nothing is weakened. The completion is still a conditional change with
// its own audit item and its own time; it is only ever recorded after the
// step's blobs are durable; and until it is recorded the table says the
// step is in progress, which is what a crash in between leaves true: a
// resumed run does the step again. Whatever is left when the execution
// ends is flushed by whoever installed the handoff.
//
// The handoff also carries the step item as the execution last read and
// wrote it, so that the next step need not read it again. A step that
// starts from it makes its start conditional on the workflow's status as
// well (StepChange.Workflow): if anything else has changed the workflow,
// the start fails, and the step reads the item afresh and decides again.
//
// Engines whose steps run in separate invocations (Lambda, activity
// workers) install none, and every step records its own completion and
// reads the step item itself.
type StepHandoff struct {
	mu       sync.Mutex
	repo     *Repository
	ref      WorkflowRef
	pending  []StepChange
	progress *StepProgress // nil: the next step reads the item afresh
}

type handoffKey struct{}

// WithStepHandoff returns ctx carrying a new handoff for the steps of one
// execution.
func WithStepHandoff(ctx context.Context) (context.Context, *StepHandoff) {
	h := &StepHandoff{}
	return context.WithValue(ctx, handoffKey{}, h), h
}

// StepHandoffFrom returns the handoff ctx carries, or nil.
func StepHandoffFrom(ctx context.Context) *StepHandoff {
	h, _ := ctx.Value(handoffKey{}).(*StepHandoff)
	return h
}

// Leave hands over change, a step of ref that has finished, for the next
// step to record with its start. It reports false, and keeps nothing, when
// there is no handoff or ctx is done (a task the engine has given up on
// must not leave its record to steps that no longer follow it); the caller
// then records the change itself.
func (h *StepHandoff) Leave(ctx context.Context, repo *Repository, ref WorkflowRef, change StepChange) bool {
	if h == nil || ctx.Err() != nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pending) > 0 && h.ref != ref {
		return false // one execution runs one workflow; never mix two
	}
	if change.At.IsZero() {
		change.At = repo.now()
	}
	h.repo, h.ref = repo, ref
	h.pending = append(h.pending, change)
	return true
}

// Take removes and returns the changes left for ref, for the caller to
// record with its own (TransitionSteps).
func (h *StepHandoff) Take(ref WorkflowRef) []StepChange {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pending) == 0 || h.ref != ref {
		return nil
	}
	p := h.pending
	h.pending = nil
	return p
}

// Restore puts back changes taken whose transaction failed, so that they
// are recorded later instead of lost.
func (h *StepHandoff) Restore(ref WorkflowRef, changes []StepChange) {
	if h == nil || len(changes) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pending) > 0 && h.ref != ref {
		return
	}
	h.ref = ref
	h.pending = append(slices.Clone(changes), h.pending...)
}

// Flush records the changes left, on their own. A step that records
// nothing of its own (the review, the failure handler) flushes first, and
// so does the engine when the execution ends.
func (h *StepHandoff) Flush(ctx context.Context) error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	repo, ref, p := h.repo, h.ref, h.pending
	h.pending = nil
	h.mu.Unlock()
	if len(p) == 0 {
		return nil
	}
	_, err := repo.TransitionSteps(ctx, ref, p...)
	return err
}

// Progress returns the step item of workflowID as the execution last knew
// it, and whether there was one.
func (h *StepHandoff) Progress(workflowID string) (StepProgress, bool) {
	if h == nil {
		return StepProgress{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.progress == nil || h.progress.WorkflowID != workflowID {
		return StepProgress{}, false
	}
	p := *h.progress
	p.Steps = maps.Clone(p.Steps)
	return p, true
}

// Remember keeps p, the step item as read, with the changes just committed
// applied: what the next step starts from.
func (h *StepHandoff) Remember(p StepProgress, committed []StepChange) {
	if h == nil {
		return
	}
	p.Steps = maps.Clone(p.Steps)
	for _, c := range committed {
		st := p.Steps[c.Step]
		st.Status = c.To
		p.Steps[c.Step] = st
		if c.Info != nil && c.Info.TotalSegments != nil {
			p.TotalSegments = *c.Info.TotalSegments
		}
	}
	h.mu.Lock()
	h.progress = &p
	h.mu.Unlock()
}

// Forget drops the step item kept: the next step reads it afresh. Steps
// that change what the item says in ways Remember does not follow (the
// segment counters, a review) forget it.
func (h *StepHandoff) Forget() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.progress = nil
	h.mu.Unlock()
}
