package pipeline

import (
	"context"
	"fmt"
)

// PrepareRerun readies a finished workflow for another execution that
// redoes only what failed: every stage from the first failed one onwards
// goes back to pending — and, when segments failed, the segment stage and
// everything after it, so failed segments are analysed again while
// finished ones stay as they are. The workflow returns to in_progress. It
// returns the stages it reset; none means there is nothing to re-run.
func (r *Repository) PrepareRerun(ctx context.Context, ref WorkflowRef, def Definition) ([]string, error) {
	prog, err := r.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		return nil, err
	}
	if prog.Status == WorkflowPending || prog.Status == WorkflowInProgress {
		return nil, fmt.Errorf("pipeline: workflow %s is still %s", ref.WorkflowID, prog.Status)
	}
	first := len(def.Stages)
	for i, st := range def.Stages {
		if prog.Steps[st.Name].Status == StepFailed && i < first {
			first = i
		}
		if st.Scope == ScopeSegmentBatch && prog.SegmentsFailed > 0 && i < first {
			first = i
		}
	}
	if first == len(def.Stages) && prog.Status == WorkflowCompleted {
		return nil, nil
	}
	var reset []string
	for _, st := range def.Stages[min(first, len(def.Stages)):] {
		cur := prog.Steps[st.Name].Status
		if cur == StepPending {
			continue
		}
		if _, err := r.TransitionStep(ctx, ref, st.Name, []StepStatus{cur}, StepPending, ""); err != nil {
			return reset, err
		}
		reset = append(reset, st.Name)
	}
	if _, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowFailed, WorkflowCompleted}, WorkflowInProgress, ""); err != nil {
		return reset, err
	}
	return reset, nil
}
