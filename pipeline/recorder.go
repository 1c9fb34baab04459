package pipeline

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
)

// A StepRecorder records in the table when the steps of a workflow start
// and finish. The step runtime calls it; whoever runs the steps chooses
// it: DirectRecorder where each step runs in its own invocation (Lambda,
// the activity and queue workers), BatchRecorder where the steps of an
// execution run one after the other in one process (the embedded engine).
type StepRecorder interface {
	// Start begins a step of ref. decide is given the workflow's step item
	// and returns what the step writes as it starts; that is recorded in
	// one write with the completions the steps before left to record.
	// Start returns the item with the changes applied, or decide's error
	// as it is. decide may be called again, with the item read afresh,
	// when the item it saw was kept from the step before and the workflow
	// has changed since.
	//
	// A nil decide is for a step that starts on its own terms (a review,
	// the failure handler): what is left is recorded on its own and the
	// item is read afresh.
	Start(ctx context.Context, ref WorkflowRef, decide StartFunc) (StepProgress, error)
	// Finish records that a step of ref, in progress, has ended: change
	// moves it on. A failure is recorded at once (the step may be retried,
	// or the failure handler reads it); a completion may be left for the
	// next step's start.
	Finish(ctx context.Context, ref WorkflowRef, change StepChange) error
	// Flush records what is left for ref when its execution ends.
	Flush(ctx context.Context, ref WorkflowRef) error
}

// A StartFunc decides from the step item p what a step writes as it
// starts. It may refresh *p when it writes to the step item itself (the
// workflow's status, segment outcomes).
type StartFunc func(p *StepProgress) (StepStart, error)

// StepStart is what a step writes as it starts.
type StepStart struct {
	// Steps are step changes: the step's own start, the segment stages it
	// closes. None: nothing is written now, and what the steps before left
	// stays for the next step to record.
	Steps []StepChange
	// Outcome, when set, ends the workflow in the same write (the finalize
	// step): it moves from in_progress (or pending) to Outcome.
	Outcome WorkflowStatus
	// Note is recorded as the workflow's error with its outcome: for a
	// workflow completed with failed segments, why they failed, so that a
	// partial result says so wherever the workflow is listed.
	Note string
}

// DirectRecorder records every start and finish on its own, reading the
// step item afresh for each start.
func DirectRecorder(repo *Repository) *Recorder { return &Recorder{repo: repo} }

// BatchRecorder leaves a step's completion to the next step of the same
// workflow, which writes it in one transaction with its own start:
// "format_parser completed, ocr in progress". Where both steps run in one
// process one after the other, a step then costs one write instead of two.
//
// Nothing is weakened. The completion is still a conditional change with
// its own audit item and its own time; the step runtime finishes a step
// only once its blobs are durable; and until the completion is recorded
// the table says the step is in progress, which is what a crash in between
// leaves true: a resumed run does the step again. The engine flushes what
// is left when the execution ends.
//
// It also keeps the step item as the last start wrote it, for the next
// start of the workflow to decide from without reading it again, but only
// when the step that started has finished since and nothing else was
// recorded in between (a segment stage's batches change the counters;
// a failure, a review change the rest). A start from a kept item is
// conditional on the workflow's status as well (StepChange.Workflow): if
// anything else has changed the workflow, the start fails and decide runs
// again on a fresh read.
//
// One recorder serves many workflows at once; each execution runs one
// workflow, and a workflow runs in one execution at a time.
func BatchRecorder(repo *Repository) *Recorder {
	return &Recorder{repo: repo, batch: true, workflows: map[string]*batchState{}}
}

// Recorder is a StepRecorder (DirectRecorder, BatchRecorder).
type Recorder struct {
	repo  *Repository
	batch bool

	mu        sync.Mutex
	workflows map[string]*batchState // batch only, by workflow id
}

// batchState is what a BatchRecorder holds for one workflow.
type batchState struct {
	ref     WorkflowRef
	pending []StepChange // completions left for the next start
	item    *StepProgress
	started string // the step item was kept when this step started
	handed  bool   // item is valid for the next start
}

var _ StepRecorder = (*Recorder)(nil)

// Keep hands p, the step item just written (an admission), to the first
// start of its workflow.
func (r *Recorder) Keep(p StepProgress) {
	if !r.batch {
		return
	}
	p.Steps = maps.Clone(p.Steps)
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state(WorkflowRef{ProjectID: p.ProjectID, DocumentID: p.DocumentID, WorkflowID: p.WorkflowID})
	s.item, s.started, s.handed = &p, "", true
}

// state returns ref's state, made on first use. r.mu is held.
func (r *Recorder) state(ref WorkflowRef) *batchState {
	s := r.workflows[ref.WorkflowID]
	if s == nil {
		s = &batchState{ref: ref}
		r.workflows[ref.WorkflowID] = s
	}
	return s
}

// Start implements StepRecorder.
func (r *Recorder) Start(ctx context.Context, ref WorkflowRef, decide StartFunc) (StepProgress, error) {
	if decide == nil {
		if err := r.Flush(ctx, ref); err != nil {
			return StepProgress{}, err
		}
		return r.repo.GetProgress(ctx, ref.WorkflowID)
	}
	for attempt := 0; ; attempt++ {
		prog, kept := r.kept(ref)
		if !kept {
			var err error
			if prog, err = r.repo.GetProgress(ctx, ref.WorkflowID); err != nil {
				return prog, err
			}
		}
		start, err := decide(&prog)
		if err != nil {
			return prog, err
		}
		if len(start.Steps) == 0 && start.Outcome == "" {
			return prog, nil
		}
		left := r.take(ref)
		changes := append(left, start.Steps...)
		written, err := r.write(ctx, ref, prog, kept, attempt, changes, start.Outcome, start.Note)
		if err != nil {
			if !written {
				r.restore(ref, left)
			}
			if errors.Is(err, ErrStale) && (kept || start.Outcome != "" && attempt == 0) {
				continue // decide again from a fresh read
			}
			return prog, err
		}
		prog = applied(prog, changes)
		r.keep(ref, prog, start)
		return prog, nil
	}
}

// write records a start's changes: with the workflow's outcome in one
// transaction when they can ride on it (the first attempt, no info), else
// the steps and then the outcome. written says the steps were recorded.
func (r *Recorder) write(ctx context.Context, ref WorkflowRef, prog StepProgress, kept bool, attempt int, changes []StepChange, outcome WorkflowStatus, note string) (written bool, err error) {
	if outcome == "" {
		if kept {
			changes = slices.Clone(changes)
			for i := range changes {
				changes[i].Workflow = prog.Status
			}
		}
		_, err := r.repo.TransitionSteps(ctx, ref, changes...)
		return err == nil, err
	}
	from := []WorkflowStatus{WorkflowInProgress, WorkflowPending}
	hasInfo := func(c StepChange) bool { return c.Info != nil }
	if attempt == 0 && !slices.ContainsFunc(changes, hasInfo) {
		_, err := r.repo.SetWorkflowStatus(ctx, ref, from, outcome, note, StatusSeen(prog), StatusWithSteps(changes...))
		return err == nil, err
	}
	if _, err := r.repo.TransitionSteps(ctx, ref, changes...); err != nil {
		return false, err
	}
	_, err = r.repo.SetWorkflowStatus(ctx, ref, from, outcome, note, StatusSeen(prog))
	return true, err
}

// applied is p with changes applied: what the next step may start from.
func applied(p StepProgress, changes []StepChange) StepProgress {
	p.Steps = maps.Clone(p.Steps)
	for _, c := range changes {
		st := p.Steps[c.Step]
		st.Status = c.To
		if c.To != StepInProgress {
			st.ReusedFrom, st.Output = c.ReusedFrom, c.Output
		}
		p.Steps[c.Step] = st
		if c.Info != nil && c.Info.TotalSegments != nil {
			p.TotalSegments = *c.Info.TotalSegments
		}
	}
	return p
}

// Finish implements StepRecorder. A task the engine has given up on (ctx
// done) records its own completion: it must not leave it to steps that no
// longer follow it.
func (r *Recorder) Finish(ctx context.Context, ref WorkflowRef, change StepChange) error {
	if !r.batch || ctx.Err() != nil || change.To == StepFailed {
		r.forget(ref)
		_, err := r.repo.TransitionSteps(ctx, ref, change)
		return err
	}
	if change.At.IsZero() {
		change.At = r.repo.now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state(ref)
	s.pending = append(s.pending, change)
	if s.item != nil && s.started == change.Step {
		p := applied(*s.item, []StepChange{change})
		s.item, s.handed = &p, true
	} else {
		s.item, s.handed = nil, false
	}
	s.started = ""
	return nil
}

// Flush implements StepRecorder: what is left for ref is recorded on its
// own, and the recorder forgets the workflow.
func (r *Recorder) Flush(ctx context.Context, ref WorkflowRef) error {
	if !r.batch {
		return nil
	}
	r.mu.Lock()
	var left []StepChange
	if s := r.workflows[ref.WorkflowID]; s != nil {
		left = s.pending
		delete(r.workflows, ref.WorkflowID)
	}
	r.mu.Unlock()
	if len(left) == 0 {
		return nil
	}
	if _, err := r.repo.TransitionSteps(ctx, ref, left...); err != nil {
		r.restore(ref, left)
		return err
	}
	return nil
}

// kept returns the step item handed to ref's next start, if any; it is
// handed once.
func (r *Recorder) kept(ref WorkflowRef) (StepProgress, bool) {
	if !r.batch {
		return StepProgress{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.workflows[ref.WorkflowID]
	if s == nil || !s.handed || s.item == nil {
		return StepProgress{}, false
	}
	p := *s.item
	p.Steps = maps.Clone(p.Steps)
	s.item, s.handed = nil, false
	return p, true
}

// keep holds p, as the start of a step just wrote it, for that step's
// finish to hand on. A start that ends the workflow forgets it.
func (r *Recorder) keep(ref WorkflowRef, p StepProgress, start StepStart) {
	if !r.batch {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if start.Outcome != "" {
		if s := r.workflows[ref.WorkflowID]; s != nil && len(s.pending) == 0 {
			delete(r.workflows, ref.WorkflowID)
		}
		return
	}
	s := r.state(ref)
	s.item, s.started, s.handed = &p, "", false
	for _, c := range start.Steps {
		if c.To == StepInProgress {
			s.started = c.Step
		}
	}
}

// forget drops the step item kept for ref.
func (r *Recorder) forget(ref WorkflowRef) {
	if !r.batch {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.workflows[ref.WorkflowID]; s != nil {
		s.item, s.started, s.handed = nil, "", false
	}
}

// take removes and returns the completions left for ref.
func (r *Recorder) take(ref WorkflowRef) []StepChange {
	if !r.batch {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.workflows[ref.WorkflowID]
	if s == nil {
		return nil
	}
	p := s.pending
	s.pending = nil
	return p
}

// restore puts back completions taken whose write failed, so that they
// are recorded later instead of lost.
func (r *Recorder) restore(ref WorkflowRef, changes []StepChange) {
	if !r.batch || len(changes) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state(ref)
	s.pending = append(slices.Clone(changes), s.pending...)
}
