package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// aiStage is the handler of an analysis builtin: per batch at segment
// scope (through the segment runner), once at document scope.
func (h *handlers) aiStage(builtin string) pipeline.Handler {
	return documentOrBatch(h.wrap(builtin, h.aiDocument), h.batch(builtin, h.segmentStage(aiKind{})))
}

// aiModel makes the stage's model from its settings, through the model
// clients the binary chose.
func (h *handlers) aiModel(ctx context.Context, st pipeline.Stage) (ai.Model, ai.Settings, error) {
	provider, _ := pipelinefile.AIProvider(st.Run.Builtin)
	s, probs := ai.ParseSettings(provider, st.Settings)
	if len(probs) > 0 {
		return nil, s, &steperr.InvalidInputError{Reason: fmt.Sprintf("stage %s: %s", st.Name, probs[0].Msg)}
	}
	if h.AIModels == nil {
		return nil, s, &steperr.StageFailedError{Reason: fmt.Sprintf("stage %s: no model clients are configured for analysis stages", st.Name)}
	}
	m, err := h.AIModels.Model(ctx, provider, s)
	if err != nil {
		return nil, s, &steperr.StageFailedError{Reason: fmt.Sprintf("stage %s: %v", st.Name, err)}
	}
	return m, s, nil
}

// aiTask is the part of every task of a workflow: the project's prompt,
// the document's language and the stage's schema and budget.
func (h *handlers) aiTask(ctx context.Context, ref pipeline.WorkflowRef, s ai.Settings, scope string) (ai.Task, error) {
	proj, err := h.Repo.GetProject(ctx, ref.ProjectID)
	if err != nil {
		return ai.Task{}, storageErr("read project", err)
	}
	attrs, err := h.docAttrs(ctx, ref)
	if err != nil {
		return ai.Task{}, err
	}
	return ai.Task{Scope: scope, Prompt: proj.Settings.DocumentPrompt, Language: attrs.Language, Schema: s.Schema, ContextTokens: s.ContextTokens}, nil
}

// analysisFailure reports whether err fails only the one analysis (a
// malformed answer, an input that cannot fit, a refusal by the service)
// rather than the batch, which is retried.
func analysisFailure(err error) bool {
	var answer *ai.AnswerError
	var long *ai.TooLongError
	var failed *steperr.StageFailedError
	return errors.As(err, &answer) || errors.As(err, &long) || errors.As(err, &failed)
}

// aiKind analyses each segment with the stage's model. An answer that
// fails the one analysis (analysisFailure) fails its segment; other
// faults fail the batch, which is retried.
type aiKind struct{}

func (aiKind) store() batchStore { return linesStore{} }

func (aiKind) summary(l stageLine) (string, []string) { return "", answerKeywords(l.Output) }

func (aiKind) open(ctx context.Context, h *handlers, in pipeline.StepInput, _ *workflowPipeline, st pipeline.Stage) (segmentWork, func(), error) {
	model, settings, err := h.aiModel(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	base, err := h.aiTask(ctx, in.Workflow, settings, ai.ScopeSegment)
	if err != nil {
		return nil, nil, err
	}
	work := eachSegment(h.parallelism(), func(ctx context.Context, c segmentCall) (segmentAnswer, error) {
		task := base
		task.Text = c.Text
		res, err := ai.Analyze(ctx, model, task)
		line := stageLine{Index: c.Index, Output: res.Output, Model: model.Name(), Usage: res.Usage, Requests: res.Requests}
		switch {
		case err != nil && analysisFailure(err):
			line.Output, line.Error = nil, err.Error()
			return segmentAnswer{line: line}, nil
		case err != nil:
			return segmentAnswer{}, err
		}
		return segmentAnswer{line: line, keywords: answerKeywords(res.Output)}, nil
	})
	return work, func() {}, nil
}

// answerKeywords are the first keywords of an answer, for the segment item.
func answerKeywords(out json.RawMessage) []string {
	var a struct {
		Keywords []string `json:"keywords"`
	}
	if json.Unmarshal(out, &a) != nil {
		return nil
	}
	return a.Keywords[:min(segmentKeywords, len(a.Keywords))]
}

// aiDocument analyses the whole document from the summaries its needed
// analysis stages left per segment, in segment order.
func (h *handlers) aiDocument(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (outcome, error) {
	st, _ := pipe.def.Stage(in.Step)
	model, settings, err := h.aiModel(ctx, st)
	if err != nil {
		return outcome{}, err
	}
	task, err := h.aiTask(ctx, in.Workflow, settings, ai.ScopeDocument)
	if err != nil {
		return outcome{}, err
	}
	var manifest []pipeline.Batch
	if err := h.getJSON(ctx, pipeline.ManifestBlobKey(in.Workflow), &manifest); err != nil {
		return outcome{}, err
	}
	for _, need := range st.Needs {
		n, _ := pipe.def.Stage(need)
		if n.Scope != pipeline.ScopeSegment || n.Run.Kind() != pipeline.RunBuiltin || !isAIBuiltin(n.Run.Builtin) {
			continue
		}
		for _, b := range manifest {
			lines, err := h.stageLines(ctx, in.Workflow, n, b.Batch)
			if err != nil {
				return outcome{}, err
			}
			for i := b.From; i <= b.To; i++ {
				var a struct {
					Summary string `json:"summary"`
				}
				if l, ok := lines[i]; ok && json.Unmarshal(l.Output, &a) == nil && a.Summary != "" {
					task.Parts = append(task.Parts, a.Summary)
				}
			}
		}
	}
	if len(task.Parts) == 0 {
		return outcome{}, &steperr.StageFailedError{Reason: fmt.Sprintf("stage %s: no segment summaries to analyse; it needs a segment-scope %s stage", st.Name, st.Run.Builtin)}
	}
	res, err := ai.Analyze(ctx, model, task)
	if err != nil {
		if analysisFailure(err) {
			return outcome{}, &steperr.StageFailedError{Reason: fmt.Sprintf("stage %s: %v", st.Name, err)}
		}
		return outcome{}, err
	}
	out := stageoutput.AIDocument{Output: res.Output, Model: model.Name(), Usage: res.Usage, Requests: res.Requests, Segments: len(task.Parts)}
	if err := h.putJSON(ctx, pipeline.StageOutputBlobKey(in.Workflow, st.Name), out); err != nil {
		return outcome{}, err
	}
	return outcome{message: fmt.Sprintf("%d segment summaries, %d input and %d output tokens", len(task.Parts), res.Usage.InputTokens, res.Usage.OutputTokens)}, nil
}

func isAIBuiltin(name string) bool {
	_, ok := pipelinefile.AIProvider(name)
	return ok
}
