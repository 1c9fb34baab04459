// Package review carries out reviewers' decisions: it checks the edits a
// review may make, applies a decision to the review, and makes a decided
// review's outcome the pipeline's (the stage completes with the edits
// written, or fails), answering the Step Functions task that waits on the
// review's token. The review stage's handler (pipeline/steps) takes the
// decision the same way on the embedded engine.
package review

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

// TakeDecision makes a decided review's outcome the pipeline's: the
// workflow runs again; an approval writes the reviewer's edits and
// completes the stage; a rejection or a timeout fails the stage and
// returns the StageFailedError the workflow fails with. The embedded
// engine calls it from the resumed review task; on Step Functions the
// decision calls it before it reports to the waiting task. Taking a
// decision twice does each thing once.
func TakeDecision(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, v pipeline.Review) error {
	if !v.State.Decided() {
		return fmt.Errorf("review %s is %s, not decided", v.ID, v.State)
	}
	ref := v.Ref()
	if _, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowWaitingReview}, pipeline.WorkflowInProgress, ""); err != nil && !errors.Is(err, pipeline.ErrStale) {
		return steperr.Storage("resume workflow", err)
	}
	var failure error
	to, note := pipeline.StepCompleted, DecisionNote(v)
	if v.State == pipeline.ReviewApproved {
		if err := ApplyEdits(ctx, repo, blobs, ref, v.Edits); err != nil {
			return err
		}
	} else {
		to, failure = pipeline.StepFailed, &steperr.StageFailedError{Reason: note}
	}
	if _, err := repo.TransitionSteps(ctx, ref, pipeline.StepChange{Step: v.Stage, From: []pipeline.StepStatus{pipeline.StepInProgress, pipeline.StepPending}, To: to, Error: note}); err != nil {
		return steperr.Storage("finish review step", err)
	}
	if err := repo.MarkReviewApplied(ctx, v.WorkflowID, v.Stage); err != nil {
		return steperr.Storage("mark review applied", err)
	}
	return failure
}

// DecisionNote says who decided what, for the step entry and the failure.
func DecisionNote(v pipeline.Review) string {
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

// CheckEdit reports whether name is an edit a review can make:
// "summary", or "<stage>.<field>" of a stage of def that writes a JSON
// output (a document stage run by a command, HTTP service or Lambda).
func CheckEdit(def pipeline.Definition, name string) error {
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

// ApplyEdits writes a review's edits over the outputs they name, so
// that later stages read the edited values: "summary" replaces the text of
// the document summary, "<stage>.<field>" one field of a stage's JSON
// output (the value is read as JSON when it parses, else as a string).
// An output a stage reused from another workflow is read where it is and
// written, edited, as the workflow's own: the producer's stays as it was.
func ApplyEdits(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, ref pipeline.WorkflowRef, edits map[string]string) error {
	prog, err := repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		return steperr.Storage("read progress", err)
	}
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
		raw, err := blob.GetBytes(ctx, blobs, prog.OutputBlobKey(ref, key), maxEditedBlobBytes)
		if err != nil {
			return steperr.Storage("read output to edit", err)
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
			return steperr.Storage("write edited output", err)
		}
		if err := repo.OwnOutput(ctx, ref, prog, key); err != nil {
			return steperr.Storage("write edited output", err)
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
			if err := CheckEdit(def, name); err != nil {
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
		return fmt.Errorf("review %s waits on Step Functions, and no client to answer it is configured", v.ID)
	}
	failure := TakeDecision(ctx, repo, blobs, v)
	var failed *steperr.StageFailedError
	switch {
	case errors.As(failure, &failed):
		return callback.Fail(ctx, v.TaskToken, steperr.NameStageFailed, failed.Error())
	case failure != nil:
		return failure
	}
	out, err := json.Marshal(pipeline.StepOutput{Step: v.Stage, Message: DecisionNote(v)})
	if err != nil {
		return err
	}
	return callback.Succeed(ctx, v.TaskToken, out)
}
