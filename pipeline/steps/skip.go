package steps

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// docAttrs reads the document's attributes format_parser stored. A
// workflow parsed before they were stored falls back to what segment_prep
// found, without a language.
func (h *handlers) docAttrs(ctx context.Context, ref pipeline.WorkflowRef) (*pipeline.DocAttrs, error) {
	raw, found, err := h.getOptional(ctx, pipeline.DocAttrsBlobKey(ref))
	if err != nil {
		return nil, err
	}
	if found {
		var doc pipeline.DocAttrs
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("corrupt %s: %v", pipeline.DocAttrsBlobKey(ref), err)}
		}
		return &doc, nil
	}
	var prep prepInfo
	if err := h.getJSON(ctx, pipeline.PrepBlobKey(ref), &prep); err != nil {
		return nil, err
	}
	return &pipeline.DocAttrs{Format: string(prep.Format), Pages: prep.Pages}, nil
}

// skipReason says why a stage's `when` did not match the document.
func (h *handlers) skipReason(ctx context.Context, ref pipeline.WorkflowRef, st pipeline.Stage) (string, error) {
	doc, err := h.docAttrs(ctx, ref)
	if err != nil {
		return "", err
	}
	if ok, why := st.When.Matches(*doc); !ok {
		return "when: " + why, nil
	}
	// The state machine decided on the attributes it kept; they can only
	// differ from the stored ones by a bug, so say what was asked.
	return "when: the condition did not match", nil
}

// skipStage records a document stage as skipped, without running it.
func (h *handlers) skipStage(ctx context.Context, in pipeline.StepInput, st pipeline.Stage) ([]byte, error) {
	reason, err := h.skipReason(ctx, in.Workflow, st)
	if err != nil {
		return nil, err
	}
	if _, err := h.Repo.TransitionSteps(ctx, in.Workflow, pipeline.StepChange{Step: st.Name, From: []pipeline.StepStatus{pipeline.StepPending, pipeline.StepFailed}, To: pipeline.StepSkipped, Error: reason}); err != nil {
		return nil, storageErr("skip step", err)
	}
	return encodeOutput(pipeline.StepOutput{Step: st.Name, Message: reason})
}

// skipSegmentStage records a segment stage as skipped for the whole
// document; every batch asks, the first one records it. When no other
// segment stage waits for it, the segments still open are finished here,
// as the stage would have.
func (h *handlers) skipSegmentStage(ctx context.Context, in pipeline.StepInput, st pipeline.Stage, pipe *workflowPipeline, prog pipeline.StepProgress) ([]byte, error) {
	if !done(prog.Steps[st.Name].Status) {
		reason, err := h.skipReason(ctx, in.Workflow, st)
		if err != nil {
			return nil, err
		}
		if _, err := h.Repo.TransitionSteps(ctx, in.Workflow, pipeline.StepChange{Step: st.Name, From: []pipeline.StepStatus{pipeline.StepPending, pipeline.StepFailed}, To: pipeline.StepSkipped, Error: reason}); err != nil {
			return nil, storageErr("skip step", err)
		}
	}
	msg := "skipped"
	if pipe.isSegmentSink(st.Name) {
		n, err := h.finishOpenSegments(ctx, in, pipe)
		if err != nil {
			return nil, err
		}
		msg = fmt.Sprintf("skipped; %d segments finished", n)
	}
	return encodeOutput(pipeline.StepOutput{Step: st.Name, Message: msg})
}
