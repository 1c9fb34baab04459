package pipeline

import (
	"context"
	"fmt"
)

// PrepareRerun readies a finished workflow for another execution that
// redoes only what did not succeed. For a failed workflow that is every
// stage from the first one that did not complete (failed, left in progress
// by a timeout, or never started); when segments failed, the segment stage
// and everything after it too, so failed segments (back to pending,
// ResetFailedSegments) are analysed again while finished ones stay as
// they are. The reset stages go back to pending and
// the workflow to in_progress. It returns the stages it reset; for a
// completed workflow with nothing to redo it returns none and changes
// nothing.
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
		status := prog.Steps[st.Name].Status
		if prog.Status == WorkflowFailed && status != StepCompleted && status != StepSkipped {
			first = min(first, i)
		}
		if st.Scope == ScopeSegment && prog.SegmentsFailed > 0 {
			first = min(first, i)
		}
	}
	if first == len(def.Stages) && prog.Status == WorkflowCompleted {
		return nil, nil
	}
	var reset []string
	for _, st := range def.Stages[first:] {
		cur := prog.Steps[st.Name].Status
		if cur == StepPending {
			continue
		}
		if _, err := r.TransitionSteps(ctx, ref, StepChange{Step: st.Name, From: []StepStatus{cur}, To: StepPending}); err != nil {
			return reset, err
		}
		reset = append(reset, st.Name)
	}
	// Failed segments go back to pending only now that the stages that
	// redo them are pending: a call interrupted before here finds them
	// still failed and resets them then.
	if prog.SegmentsFailed > 0 {
		if _, err := r.ResetFailedSegments(ctx, ref); err != nil {
			return reset, err
		}
	}
	// A failed workflow runs again even when every stage completed (its
	// finalize failed): the new execution skips the completed stages.
	if _, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowFailed, WorkflowCompleted}, WorkflowInProgress, ""); err != nil {
		return reset, err
	}
	if len(reset) == 0 {
		reset = []string{StepFinalize}
	}
	return reset, nil
}
