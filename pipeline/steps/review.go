package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// maxEditedBlobBytes bounds a stage output a review edits.
const maxEditedBlobBytes = 64 << 20

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
		if err := TakeDecision(ctx, h.Repo, h.Blobs, v); err != nil {
			return nil, err
		}
		return encodeOutput(pipeline.StepOutput{Step: step, Message: decisionNote(v)})
	})
}

// TakeDecision makes a decided review's outcome the pipeline's: the
// workflow runs again; an approval writes the reviewer's edits and
// completes the stage; a rejection or a timeout fails the stage and
// returns the StageFailedError the workflow fails with. The embedded
// engine calls it from the resumed review task; on Step Functions the
// decision calls it before it reports to the waiting task. Taking a
// decision twice does each thing once.
func TakeDecision(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, v pipeline.Review) error {
	if !v.State.Decided() {
		return fmt.Errorf("steps: review %s is %s, not decided", v.ID, v.State)
	}
	ref := v.Ref()
	if _, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowWaitingReview}, pipeline.WorkflowInProgress, ""); err != nil && !errors.Is(err, pipeline.ErrStale) {
		return storageErr("resume workflow", err)
	}
	var failure error
	to, note := pipeline.StepCompleted, decisionNote(v)
	if v.State == pipeline.ReviewApproved {
		if err := ApplyReviewEdits(ctx, blobs, ref, v.Edits); err != nil {
			return err
		}
	} else {
		to, failure = pipeline.StepFailed, &steperr.StageFailedError{Reason: note}
	}
	if _, err := repo.TransitionSteps(ctx, ref, pipeline.StepChange{Step: v.Stage, From: []pipeline.StepStatus{pipeline.StepInProgress, pipeline.StepPending}, To: to, Error: note}); err != nil {
		return storageErr("finish review step", err)
	}
	if err := repo.MarkReviewApplied(ctx, v.WorkflowID, v.Stage); err != nil {
		return storageErr("mark review applied", err)
	}
	return failure
}

// decisionNote says who decided what, for the step entry and the failure.
func decisionNote(v pipeline.Review) string {
	var s string
	switch v.State {
	case pipeline.ReviewTimedOut:
		s = fmt.Sprintf("review %s timed out", v.Stage)
	default:
		s = fmt.Sprintf("%s by %s", v.State, v.DecidedBy)
	}
	if v.Comment != "" {
		s += ": " + v.Comment
	}
	return s
}

// EditSummary is the edit name of the document summary's text.
const EditSummary = "summary"

// CheckReviewEdit reports whether name is an edit a review can make:
// "summary", or "<stage>.<field>" of a stage of def that writes a JSON
// output (a document stage run by a command, HTTP service or Lambda).
func CheckReviewEdit(def pipeline.Definition, name string) error {
	if name == EditSummary {
		return nil
	}
	stage, field, ok := strings.Cut(name, ".")
	st, found := def.Stage(stage)
	switch {
	case !ok || field == "":
		return fmt.Errorf("edit %q: want summary or STAGE.FIELD", name)
	case !found:
		return fmt.Errorf("edit %q: pipeline %s has no stage %q", name, def.Name, stage)
	case st.Scope != pipeline.ScopeDocument || st.Run.Kind() == pipeline.RunBuiltin || st.Run.Kind() == pipeline.RunReview:
		return fmt.Errorf("edit %q: stage %s writes no document JSON output to edit", name, stage)
	}
	return nil
}

// ApplyReviewEdits writes a review's edits over the outputs they name, so
// that later stages read the edited values: "summary" replaces the text of
// the document summary, "<stage>.<field>" one field of a stage's JSON
// output (the value is read as JSON when it parses, else as a string).
func ApplyReviewEdits(ctx context.Context, blobs blob.Store, ref pipeline.WorkflowRef, edits map[string]string) error {
	byKey := map[string]map[string]string{}
	for name, value := range edits {
		key, field := pipeline.SummaryBlobKey(ref), "summary"
		if name != EditSummary {
			stage, f, _ := strings.Cut(name, ".")
			key, field = pipeline.StageOutputBlobKey(ref, stage), f
		}
		if byKey[key] == nil {
			byKey[key] = map[string]string{}
		}
		byKey[key][field] = value
	}
	for key, fields := range byKey {
		raw, err := blob.GetBytes(ctx, blobs, key, maxEditedBlobBytes)
		if err != nil {
			return storageErr("read output to edit", err)
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return &steperr.StageFailedError{Reason: fmt.Sprintf("review edits: %s is not a JSON object", key)}
		}
		for f, value := range fields {
			var v any
			switch {
			case key == pipeline.SummaryBlobKey(ref):
				// The summary is its sentences: the reviewer's text becomes
				// the one sentence, whatever it looks like.
				v = []analyze.DocumentSentence{{Text: value, Score: 1}}
			case json.Unmarshal([]byte(value), &v) != nil:
				v = value
			}
			obj[f] = v
		}
		out, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		if err := blob.PutBytes(ctx, blobs, key, out); err != nil {
			return storageErr("write edited output", err)
		}
	}
	return nil
}

// TaskCallback answers a Step Functions task that waits on a review's
// token (SendTaskSuccess / SendTaskFailure).
type TaskCallback interface {
	Succeed(ctx context.Context, token string, output []byte) error
	Fail(ctx context.Context, token string, errorName, cause string) error
}

// Decide applies a reviewer's action. A decision on a review whose task
// waits on Step Functions is taken at once and reported with the token
// (callback may be nil only where no review holds one); on the embedded
// engine the parked workflow goes on when `docpipe work` next
// runs it.
func Decide(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, callback TaskCallback, reviewID string, d pipeline.Decision) (pipeline.Review, error) {
	wf, stage, err := pipeline.ParseReviewID(reviewID)
	if err != nil {
		return pipeline.Review{}, err
	}
	if len(d.Edits) > 0 {
		v, err := repo.GetReview(ctx, wf, stage)
		if err != nil {
			return v, err
		}
		def, err := repo.Definition(ctx, v.Pipeline, v.PipelineVersion)
		if err != nil {
			return v, err
		}
		for name := range d.Edits {
			if err := CheckReviewEdit(def, name); err != nil {
				return v, err
			}
		}
	}
	v, err := repo.ActOnReview(ctx, wf, stage, d)
	if err != nil || !v.State.Decided() || v.TaskToken == "" {
		return v, err
	}
	return v, ReportDecision(ctx, repo, blobs, callback, v)
}

// ReportDecision takes a decided review's outcome and answers the Step
// Functions task waiting on its token.
func ReportDecision(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, callback TaskCallback, v pipeline.Review) error {
	if callback == nil {
		return fmt.Errorf("steps: review %s waits on Step Functions, and no client to answer it is configured", v.ID)
	}
	failure := TakeDecision(ctx, repo, blobs, v)
	var failed *steperr.StageFailedError
	switch {
	case errors.As(failure, &failed):
		return callback.Fail(ctx, v.TaskToken, steperr.NameStageFailed, failed.Error())
	case failure != nil:
		return failure
	}
	out, err := encodeOutput(pipeline.StepOutput{Step: v.Stage, Message: decisionNote(v)})
	if err != nil {
		return err
	}
	return callback.Succeed(ctx, v.TaskToken, out)
}
