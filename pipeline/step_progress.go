package pipeline

import (
	"context"
	"errors"
	"fmt"

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
