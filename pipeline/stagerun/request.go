package stagerun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Scopes a stage runs at.
const (
	ScopeDocument = "document"
	ScopeSegment  = "segment"
)

// DefaultMaxOutput bounds a stage's output (stdout or response body).
const DefaultMaxOutput = 64 << 20

// DefaultMaxInline bounds the request a remote stage receives once its
// needs' outputs are inlined; Lambda refuses synchronous payloads over 6 MB.
const DefaultMaxInline = 6 << 20

// Runner runs one stage for one document or segment.
type Runner interface {
	Run(ctx context.Context, req Request) (Result, error)
}

// Request is the JSON object a stage receives.
type Request struct {
	WorkflowID string   `json:"workflow_id"`
	Project    Project  `json:"project"`
	Document   Document `json:"document"`
	Stage      string   `json:"stage"`
	Scope      string   `json:"scope"`
	// Settings are the stage's own settings from the pipeline file ({}
	// when it has none).
	Settings map[string]any `json:"settings"`
	// Segment is set for segment scope only.
	Segment *Segment `json:"segment,omitempty"`
	Inputs  Inputs   `json:"inputs"`
	// InputsInline is filled by the remote runners (HTTP, Lambda) from
	// Inputs; callers leave it empty.
	InputsInline *InlineInputs `json:"inputs_inline,omitempty"`
	// Progress, when set, receives the progress a command reports on
	// stderr, from one goroutine, never after Run returns. The remote
	// runners report none.
	Progress func(Progress) `json:"-"`
}

// Project is the project the document belongs to, with the settings it
// gives every stage.
type Project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Language is the documents' expected language, "" to detect.
	Language string `json:"language,omitempty"`
	// DocumentPrompt is the project's free text for every stage: what
	// the documents are and what to look for.
	DocumentPrompt string     `json:"document_prompt,omitempty"`
	OCR            ProjectOCR `json:"ocr"`
}

// ProjectOCR is whether and how the project recognises pages without
// text.
type ProjectOCR struct {
	Enabled   bool     `json:"enabled"`
	Languages []string `json:"languages,omitempty"`
}

// Document describes the document being processed.
type Document struct {
	ID       string `json:"id"`
	FileName string `json:"file_name"`
	Format   string `json:"format"`
	Language string `json:"language,omitempty"`
	Pages    int    `json:"pages"`
}

// Segment is the segment a segment-scope stage works on.
type Segment struct {
	Index int    `json:"index"`
	Text  string `json:"text"`
}

// Inputs are local files the caller has materialised for the stage.
type Inputs struct {
	// Source is the path of the original document.
	Source string `json:"source,omitempty"`
	// SourceURL is where a remote stage can fetch the original document
	// (for example a presigned URL); optional.
	SourceURL string `json:"source_url,omitempty"`
	// SegmentText is the path of the segment's text (segment scope).
	SegmentText string `json:"segment_text,omitempty"`
	// Needs maps each needed stage to the path of its output file.
	Needs map[string]string `json:"needs,omitempty"`
}

// InlineInputs carries, for a remote stage, the outputs of the stages it
// needs, as JSON values instead of file paths.
type InlineInputs struct {
	Needs map[string]json.RawMessage `json:"needs,omitempty"`
}

// Result is what a stage returned.
type Result struct {
	// Output is the stage's JSON output, stored as its result.
	Output json.RawMessage
	// Text replaces the segment text later stages see, when a
	// segment-scope stage returned {"text": "..."}; nil otherwise.
	Text *string
}

// localPayload is the request as a command reads it on stdin.
func localPayload(req Request) ([]byte, error) {
	if req.Settings == nil {
		req.Settings = map[string]any{}
	}
	req.InputsInline = nil
	return marshal(req)
}

// remotePayload is the request as an HTTP service or a Lambda function
// receives it: local paths mean nothing there, so the needs' outputs are
// read and sent inline, the segment text travels in "segment", and the
// source is only sent as a URL, when the caller has one.
func remotePayload(req Request, limit int) ([]byte, error) {
	if req.Settings == nil {
		req.Settings = map[string]any{}
	}
	needs := make(map[string]json.RawMessage, len(req.Inputs.Needs))
	for stage, path := range req.Inputs.Needs {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("%s: output of %s: %v", req.Stage, stage, err)}
		}
		if !json.Valid(raw) {
			return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("%s: output of %s is not JSON", req.Stage, stage)}
		}
		needs[stage] = raw
	}
	req.Inputs = Inputs{SourceURL: req.Inputs.SourceURL}
	req.InputsInline = &InlineInputs{Needs: needs}
	raw, err := marshal(req)
	if err != nil {
		return nil, err
	}
	if len(raw) > limit {
		return nil, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: request with inline inputs is %d bytes, over the %d-byte limit", req.Stage, len(raw), limit)}
	}
	return raw, nil
}

func marshal(req Request) ([]byte, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("%s: encode request: %v", req.Stage, err)}
	}
	return raw, nil
}

// parseOutput checks that out is JSON and picks up a segment stage's
// replacement text.
func parseOutput(stage, scope string, out []byte) (Result, error) {
	if err := json.Unmarshal(out, new(json.RawMessage)); err != nil {
		return Result{}, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: stage output is not JSON: %v", stage, err)}
	}
	res := Result{Output: json.RawMessage(bytes.TrimSpace(out))}
	if scope != ScopeSegment || res.Output[0] != '{' {
		return res, nil
	}
	var obj struct {
		Text json.RawMessage `json:"text"`
	}
	if err := json.Unmarshal(res.Output, &obj); err != nil {
		return Result{}, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: stage output: %v", stage, err)}
	}
	if len(obj.Text) == 0 || string(obj.Text) == "null" {
		return res, nil
	}
	var text string
	if err := json.Unmarshal(obj.Text, &text); err != nil {
		return Result{}, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: stage output: \"text\" must be a string", stage)}
	}
	res.Text = &text
	return res, nil
}

// timedOut reports a stage that ran past its own timeout; it is transient
// so that the stage's retry policy decides whether to try again.
func timedOut(stage string, timeout time.Duration) error {
	return &steperr.TransientError{Reason: fmt.Sprintf("%s: timed out after %gs", stage, timeout.Seconds())}
}

// errStageTimeout is the cause of a context ended by the stage's timeout,
// as opposed to the caller's own deadline or cancellation.
var errStageTimeout = errors.New("stage timeout")

// withTimeout bounds ctx by the stage's timeout, if it has one.
func withTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout, errStageTimeout)
}
