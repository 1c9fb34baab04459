package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// RecordStepProgress stores a running step's progress: one conditional
// update of that step's progress attribute alone, applied only while the
// step is in progress, so a late write can never dress a finished or
// failed step up as running. It returns false when the step was not in
// progress. Callers bound the rate (at most one write per second).
func (r *Repository) RecordStepProgress(ctx context.Context, workflowID, step string, p StepRunProgress) (bool, error) {
	if err := validName("step", step); err != nil {
		return false, err
	}
	if p.At == "" {
		p.At = FormatTime(r.now().UTC())
	}
	value := map[string]any{"done": float64(p.Done), "total": float64(p.Total), "unit": p.Unit, "at": p.At}
	_, err := r.t.Update(ctx, StepKey(workflowID),
		[]table.Update{table.Set{Path: stepPath(step, "progress"), Value: value}},
		table.Equals{Path: stepPath(step, "status"), Value: string(StepInProgress)})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, table.ErrConditionFailed):
		return false, nil
	}
	return false, fmt.Errorf("pipeline: progress of %s of %s: %w", step, workflowID, err)
}

// ProgressInterval is the least time between two progress writes of one
// step: on a 3,000-page document that is a handful of writes, not 3,000.
const ProgressInterval = time.Second

// FirstProgressAfter is how long a step runs before its progress is first
// written. A step done sooner writes none: its completion says all a
// reader needs, and for a one-page document the writes would be two of
// its twenty transactions.
const FirstProgressAfter = 200 * time.Millisecond

// ProgressRecorder counts the units a long step finishes and records them
// once the step has run FirstProgressAfter, then at most once per
// ProgressInterval, and at Finish when a count was recorded before. Safe
// for concurrent use by the step's workers. Progress is informational: a
// write that fails is dropped, never the step's failure.
type ProgressRecorder struct {
	repo     *Repository
	workflow string
	step     string
	unit     string
	total    int
	begun    time.Time   // on the repository's clock
	first    *time.Timer // writes the first count of a step stalled before it is due

	mu       sync.Mutex
	done     int
	last     time.Time       // of the last write, zero before the first
	written  StepRunProgress // what the last write recorded
	finished bool
}

// NewProgressRecorder starts counting step's units (total of them) in
// workflowID.
func (r *Repository) NewProgressRecorder(workflowID, step string, total int, unit string) *ProgressRecorder {
	p := &ProgressRecorder{repo: r, workflow: workflowID, step: step, unit: unit, total: total, begun: r.now()}
	// A step whose next unit is slow in coming (a long page, a held
	// stream) still shows its count once FirstProgressAfter has passed.
	p.first = time.AfterFunc(FirstProgressAfter, func() {
		p.mu.Lock()
		if p.finished || !p.last.IsZero() {
			p.mu.Unlock()
			return
		}
		p.flushLocked(context.Background(), true)
	})
	return p
}

// Add counts n more finished units and records the count when one is due.
func (p *ProgressRecorder) Add(ctx context.Context, n int) {
	p.mu.Lock()
	p.done += n
	p.flushLocked(ctx, false)
}

// Set replaces the count and the total, for a step that learns both from
// someone else (a command reporting its own progress), under the same
// bound on writes as Add.
func (p *ProgressRecorder) Set(ctx context.Context, done, total int) {
	p.mu.Lock()
	p.done, p.total = done, total
	p.flushLocked(ctx, false)
}

// Finish records the final count when an earlier count was recorded and
// differs from it; a step that recorded none leaves its completion to say
// it finished.
func (p *ProgressRecorder) Finish(ctx context.Context) {
	p.first.Stop()
	p.mu.Lock()
	p.finished = true
	if p.last.IsZero() {
		p.mu.Unlock()
		return
	}
	p.flushLocked(ctx, true)
}

// flushLocked writes the count when one is due (or forced and changed)
// and unlocks p. The write itself runs unlocked, so workers never wait on
// the table.
func (p *ProgressRecorder) flushLocked(ctx context.Context, force bool) {
	now := p.repo.now()
	prog := StepRunProgress{Done: p.done, Total: p.total, Unit: p.unit}
	var due bool
	if p.last.IsZero() {
		due = force || now.Sub(p.begun) >= FirstProgressAfter
	} else {
		due = (force || now.Sub(p.last) >= ProgressInterval) && prog != p.written
	}
	if due {
		p.last, p.written = now, prog
	}
	p.mu.Unlock()
	if due {
		_, _ = p.repo.RecordStepProgress(ctx, p.workflow, p.step, prog)
	}
}
