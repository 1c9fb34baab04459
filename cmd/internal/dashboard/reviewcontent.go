package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/review"
)

// maxReviewOutputBytes bounds one output the review page reads to show;
// a larger one is named, and left to `docpipe review approve --set`.
const maxReviewOutputBytes = 1 << 20

// longFieldChars is the length past which a field is edited in a text
// area rather than on one line.
const longFieldChars = 80

// reviewContent is what a review is about: the document's summary and the
// fields of the stage outputs its approval may edit, each with its
// current value, in the words `docpipe review approve --set` takes.
type reviewContent struct {
	Summary *editField    `json:"summary,omitempty"` // nil until the document is summarized
	Stages  []stageFields `json:"stages"`
}

// stageFields are the editable fields of one stage's JSON output, in the
// order the stage wrote them. Note says why a stage's output is not
// shown field by field.
type stageFields struct {
	Stage  string      `json:"stage"`
	Label  string      `json:"label,omitempty"`
	Fields []editField `json:"fields,omitempty"`
	Note   string      `json:"note,omitempty"`
}

// editField is one value a reviewer may replace.
type editField struct {
	// Edit is the edit's name: "summary" or "STAGE.FIELD".
	Edit  string `json:"edit"`
	Label string `json:"label"`
	// Value is the current value as an edit would write it back: a
	// string's text, any other value's JSON.
	Value string `json:"value"`
	Long  bool   `json:"long,omitempty"`
}

func newEditField(edit, label, value string) editField {
	return editField{Edit: edit, Label: label, Value: value, Long: len(value) > longFieldChars || strings.Contains(value, "\n")}
}

// loadReviewContent reads the summary and every stage output of the
// review's workflow that CheckReviewEdit lets an approval change.
func (s *Server) loadReviewContent(ctx context.Context, v pipeline.Review) (reviewContent, error) {
	def, err := s.opts.Repo.Definition(ctx, v.Pipeline, v.PipelineVersion)
	if err != nil {
		return reviewContent{}, err
	}
	ref := v.Ref()
	prog, err := s.opts.Repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		return reviewContent{}, err
	}
	var c reviewContent
	raw, found, err := s.readOutput(ctx, prog.OutputBlobKey(ref, pipeline.SummaryBlobKey(ref)))
	if err != nil {
		return c, err
	}
	if found {
		var sum struct {
			Summary []struct {
				Text string `json:"text"`
			} `json:"summary"`
		}
		if err := json.Unmarshal(raw, &sum); err != nil {
			return c, fmt.Errorf("summary of %s: %w", v.WorkflowID, err)
		}
		texts := make([]string, len(sum.Summary))
		for i, sentence := range sum.Summary {
			texts[i] = sentence.Text
		}
		f := newEditField(review.EditSummary, "Summary", strings.Join(texts, " "))
		f.Long = true
		c.Summary = &f
	}
	for _, st := range def.Stages {
		raw, found, err := s.readOutput(ctx, prog.OutputBlobKey(ref, pipeline.StageOutputBlobKey(ref, st.Name)))
		var tooLarge *blob.TooLargeError
		switch {
		case errors.As(err, &tooLarge):
			c.Stages = append(c.Stages, stageFields{Stage: st.Name, Label: st.Label,
				Note: fmt.Sprintf("its output is over %s; edit it with docpipe review approve --set", formatBytes(maxReviewOutputBytes))})
			continue
		case err != nil:
			return c, err
		case !found:
			continue // not run yet, or a stage that keeps no output of this kind
		}
		fields, err := outputFields(def, st.Name, raw)
		if err != nil {
			c.Stages = append(c.Stages, stageFields{Stage: st.Name, Label: st.Label, Note: err.Error()})
			continue
		}
		if len(fields) > 0 {
			c.Stages = append(c.Stages, stageFields{Stage: st.Name, Label: st.Label, Fields: fields})
		}
	}
	return c, nil
}

// readOutput reads one result blob, bounded; found is false when there
// is none.
func (s *Server) readOutput(ctx context.Context, key string) (raw []byte, found bool, err error) {
	raw, err = blob.GetBytes(ctx, s.opts.Blobs, key, maxReviewOutputBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, false, nil
	}
	return raw, err == nil, err
}

// outputFields lists the top-level fields of a stage's JSON output that
// an approval may edit, in the order the stage wrote them. None when the
// stage is not one a review edits.
func outputFields(def pipeline.Definition, stage string, raw []byte) ([]editField, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("its output is not a JSON object, so it has no fields to edit")
	}
	var fields []editField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("its output is not valid JSON: %w", err)
		}
		name, _ := tok.(string) // an object's keys are strings
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("its output is not valid JSON: %w", err)
		}
		edit := stage + "." + name
		if review.CheckEdit(def, edit) != nil {
			return nil, nil
		}
		fields = append(fields, newEditField(edit, name, editValue(value)))
	}
	return fields, nil
}

// editValue is a JSON value as a reviewer reads and retypes it: a
// string's text, anything else as its compact JSON (an edit's value is
// read as JSON when it parses, else as a string).
func editValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	return buf.String()
}
