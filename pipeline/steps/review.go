package steps

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/review"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// reviewStage is the handler of review stages. It opens the review (once)
// and, while nobody has decided, ends the task with a ReviewPendingError:
// the embedded engine parks the workflow as waiting_review, and a Step
// Functions worker, whose task token is now on the review, reports nothing.
// Invoked again after the decision (a resumed run), it takes the decision.
func (h *handlers) reviewStage() pipeline.Handler {
	return pipeline.HandlerFunc(func(ctx context.Context, payload []byte) ([]byte, error) {
		in, err := decodeInput(payload)
		if err != nil {
			return nil, err
		}
		var head struct {
			Token string `json:"task_token"` // queue mode, and Lambda's waitForTaskToken
		}
		_ = json.Unmarshal(payload, &head) // decodeInput read it as JSON already
		step := in.Step
		// A decision comes from another process: what the steps before
		// left is recorded first, and the step item read afresh.
		prog, err := h.Recorder.Start(ctx, in.Workflow, nil)
		if err != nil {
			return nil, storageErr("read progress", err)
		}
		pipe, err := h.pipelineOf(ctx, prog)
		if err != nil {
			return nil, err
		}
		st, err := pipe.stage(step, pipeline.HandlerReview)
		if err != nil {
			return nil, err
		}
		if done(prog.Steps[step].Status) {
			return encodeOutput(pipeline.StepOutput{Step: step, Skipped: true, Message: "already " + string(prog.Steps[step].Status)})
		}
		if prog.Status.Final() {
			return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("workflow is already %s", prog.Status)}
		}
		if prog.Status == pipeline.WorkflowPending {
			if _, err := h.Repo.SetWorkflowStatus(ctx, in.Workflow, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, ""); err != nil {
				return nil, storageErr("mark workflow in progress", err)
			}
		}
		if err := h.closeBatchStages(ctx, in.Workflow, step, prog, pipe); err != nil {
			return nil, err
		}
		if in.Skip {
			return h.skipStage(ctx, in, st)
		}
		if _, err := h.Repo.TransitionSteps(ctx, in.Workflow, pipeline.StepChange{Step: step, From: []pipeline.StepStatus{pipeline.StepPending, pipeline.StepFailed}, To: pipeline.StepInProgress}); err != nil {
			return nil, storageErr("start step", err)
		}
		v, err := h.Repo.OpenReview(ctx, in.Workflow, st, prog, head.Token)
		if err != nil {
			return nil, storageErr("open review", err)
		}
		if !v.State.Decided() {
			if _, err := h.Repo.SetWorkflowStatus(ctx, in.Workflow, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowWaitingReview, ""); err != nil {
				return nil, storageErr("mark workflow waiting for review", err)
			}
			return nil, &steperr.ReviewPendingError{Reason: fmt.Sprintf("%s due %s", v.ID, v.DueAt), Callback: head.Token != ""}
		}
		if err := review.TakeDecision(ctx, h.Repo, h.Blobs, v); err != nil {
			return nil, err
		}
		return encodeOutput(pipeline.StepOutput{Step: step, Message: review.DecisionNote(v)})
	})
}
