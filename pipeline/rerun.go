package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/docpipe/docpipe/pipeline/table"
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

// RerunFrom is what PrepareRerunFrom reset.
type RerunFrom struct {
	// Stages went back to pending: from, and every stage after it.
	Stages []string
	// SegmentStages are the reset segment stages, whose stored answers
	// the caller removes (SegmentStageBlobPrefix) so that they answer
	// every segment again: through the stage cache, or by running.
	SegmentStages []Stage
	// Segments went back to pending, when a reset stage gives segments
	// their outcome.
	Segments int
}

// PrepareRerunFrom readies a finished workflow to run stage from and
// every stage after it again, on the version it records. When a reset
// stage is a segment stage, or builds the segments, every segment goes
// back to pending too. noCache runs the reset stages without reusing
// outputs (a stage whose definition and inputs are unchanged is reused
// otherwise). The workflow goes back to in_progress.
func (r *Repository) PrepareRerunFrom(ctx context.Context, ref WorkflowRef, def Definition, from string, noCache bool) (RerunFrom, error) {
	var out RerunFrom
	prog, err := r.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		return out, err
	}
	if !prog.Status.Final() {
		return out, fmt.Errorf("pipeline: workflow %s is still %s", ref.WorkflowID, prog.Status)
	}
	first := slices.IndexFunc(def.Stages, func(st Stage) bool { return st.Name == from })
	if first < 0 {
		return out, fmt.Errorf("pipeline: %s has no stage %q: %w", PipelineKey(def.Name, prog.PipelineVersion), from, ErrNotFound)
	}
	resegment := false
	for _, st := range def.Stages[first:] {
		if st.Scope == ScopeSegment {
			out.SegmentStages = append(out.SegmentStages, st)
			resegment = true
		}
		resegment = resegment || slices.Contains(IngestionStages, st.Name)
	}
	updates := []table.Update{table.Set{Path: "data.no_cache", Value: noCache}}
	for _, st := range def.Stages[first:] {
		updates = append(updates, table.Remove{Path: stepPath(st.Name, "segments_reused")}, table.Remove{Path: stepPath(st.Name, "segments_run")}, table.Remove{Path: stepPath(st.Name, "segments_reused_own")})
	}
	if _, err := r.t.Update(ctx, StepKey(ref.WorkflowID), updates, table.Exists{Path: table.AttrPK}); err != nil {
		return out, fmt.Errorf("pipeline: rerun %s: %w", ref.WorkflowID, err)
	}
	for _, st := range def.Stages[first:] {
		cur := prog.Steps[st.Name].Status
		if cur == StepPending {
			continue
		}
		if _, err := r.TransitionSteps(ctx, ref, StepChange{Step: st.Name, From: []StepStatus{cur}, To: StepPending, Error: "re-run from " + from}); err != nil {
			return out, err
		}
		out.Stages = append(out.Stages, st.Name)
	}
	if resegment {
		if out.Segments, err = r.resetAllSegments(ctx, ref); err != nil {
			return out, err
		}
	}
	if _, err := r.SetWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowFailed, WorkflowCompleted}, WorkflowInProgress, ""); err != nil {
		return out, err
	}
	return out, nil
}

// resetAllSegments moves every finished segment back to pending, with the
// counters, many to a transaction.
func (r *Repository) resetAllSegments(ctx context.Context, ref WorkflowRef) (int, error) {
	var finished []Segment
	for token := ""; ; {
		page, next, err := r.ListSegments(ctx, ref.WorkflowID, 1000, token)
		if err != nil {
			return 0, err
		}
		for _, s := range page {
			if s.Status != SegmentPending {
				finished = append(finished, s)
			}
		}
		if token = next; token == "" {
			break
		}
	}
	n := 0
	for chunk := range slices.Chunk(finished, table.MaxTransactItems-1) {
		at := FormatTime(r.now())
		actions := make([]table.TxAction, 0, len(chunk)+1)
		deltas := map[string]float64{}
		for _, s := range chunk {
			actions = append(actions, table.TxUpdate{
				Key:     SegmentKey(ref.WorkflowID, s.Index),
				Updates: []table.Update{table.Set{Path: pathStatus, Value: string(SegmentPending)}, table.Set{Path: pathUpdatedAt, Value: at}, table.Remove{Path: pathError}, table.Remove{Path: "data.stage"}},
				Cond:    table.Equals{Path: pathStatus, Value: string(s.Status)},
			})
			deltas[counterPath(s.Status)]--
			if s.Status == SegmentFailed && s.Stage != "" {
				deltas[stepPath(s.Stage, "segments_failed")]--
			}
		}
		actions = append(actions, stepCounters(ref.WorkflowID, deltas))
		if err := r.t.Transact(ctx, actions); err != nil {
			return n, fmt.Errorf("pipeline: reset segments of %s: %w", ref.WorkflowID, err)
		}
		n += len(chunk)
	}
	return n, nil
}
