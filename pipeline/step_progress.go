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

// ProgressRecorder counts the units a long step finishes and records them
// at most once per ProgressInterval, plus once at Finish. Safe for
// concurrent use by the step's workers. Progress is informational: a write
// that fails is dropped, never the step's failure.
type ProgressRecorder struct {
	repo     *Repository
	workflow string
	step     string
	unit     string
	total    int

	mu      sync.Mutex
	done    int
	last    time.Time       // of the last write, zero before the first
	written StepRunProgress // what the last write recorded
}

// NewProgressRecorder starts counting step's units (total of them) in
// workflowID.
func (r *Repository) NewProgressRecorder(workflowID, step string, total int, unit string) *ProgressRecorder {
	return &ProgressRecorder{repo: r, workflow: workflowID, step: step, unit: unit, total: total}
}

// Add counts n more finished units and records the count when the last
// write is ProgressInterval old. The first unit is written at once, so a
// reader sees the step's total early.
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

// Finish records the final count, unless the last write already did (a
// step of one unit: its first write was also its last).
func (p *ProgressRecorder) Finish(ctx context.Context) {
	p.mu.Lock()
	p.flushLocked(ctx, true)
}

// flushLocked writes the count when one is due (or forced) and unlocks p.
// The write itself runs unlocked, so workers never wait on the table.
func (p *ProgressRecorder) flushLocked(ctx context.Context, force bool) {
	now := p.repo.now()
	prog := StepRunProgress{Done: p.done, Total: p.total, Unit: p.unit}
	due := p.last.IsZero() || (force || now.Sub(p.last) >= ProgressInterval) && prog != p.written
	if due {
		p.last, p.written = now, prog
	}
	p.mu.Unlock()
	if due {
		_, _ = p.repo.RecordStepProgress(ctx, p.workflow, p.step, prog)
	}
}
