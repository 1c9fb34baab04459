package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Outputs is what one workflow produced, as scoring reads it.
type Outputs struct {
	// Summary is the document summary (summary.json), nil when none was
	// written.
	Summary json.RawMessage
	// Stages are the outputs of the users' stages the pipeline has, by
	// name; a stage that wrote nothing is absent.
	Stages map[string]StageOutput
	// Pages are the segments' texts by index (Pages[0] is segment 1); a
	// segment without text is "".
	Pages []string
}

// StageOutput is a user's stage's answer: a document stage's one JSON
// value, or a segment stage's answer for each segment that has one, in
// index order.
type StageOutput struct {
	Document json.RawMessage
	Segments []json.RawMessage
}

// errMissing marks a value the outputs do not have.
var errMissing = errors.New("not produced")

// summaryView is the part of summary.json that field paths reach.
type summaryView struct {
	Language    string `json:"language"`
	TopKeywords []struct {
		Term string `json:"term"`
	} `json:"top_keywords"`
	TopEntities map[string][]struct {
		Value string `json:"value"`
	} `json:"top_entities"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// Built-in paths into the document summary.
const (
	PathSummary  = "summary"
	PathLanguage = "language"
	PathKeywords = "keywords"
	PathEntities = "entities"
)

// Value is the value at a field path, or an error wrapping errMissing
// that says what is not there.
func (o Outputs) Value(path string) (any, error) {
	head, rest, _ := strings.Cut(path, ".")
	switch head {
	case PathSummary, PathLanguage, PathKeywords, PathEntities:
		return o.summaryValue(head, rest)
	}
	st, ok := o.Stages[head]
	if !ok {
		return nil, fmt.Errorf("%w: no output of a stage %s", errMissing, head)
	}
	if st.Document != nil {
		return jsonPath(st.Document, head, rest)
	}
	list := []any{}
	for _, raw := range st.Segments {
		v, err := jsonPath(raw, head, rest)
		if errors.Is(err, errMissing) {
			continue // this segment's answer lacks the field
		}
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, nil
}

func (o Outputs) summaryValue(head, rest string) (any, error) {
	if o.Summary == nil {
		return nil, fmt.Errorf("%w: no document summary", errMissing)
	}
	var s summaryView
	if err := json.Unmarshal(o.Summary, &s); err != nil {
		return nil, fmt.Errorf("document summary: %w", err)
	}
	if rest != "" && head != PathEntities {
		return nil, fmt.Errorf("%w: %s has no fields (%s.%s)", errMissing, head, head, rest)
	}
	switch head {
	case PathLanguage:
		return s.Language, nil
	case PathSummary:
		texts := make([]string, len(s.Summary))
		for i, sent := range s.Summary {
			texts[i] = sent.Text
		}
		return strings.Join(texts, " "), nil
	case PathKeywords:
		out := make([]any, len(s.TopKeywords))
		for i, k := range s.TopKeywords {
			out[i] = k.Term
		}
		return out, nil
	}
	out := []any{}
	for typ, ents := range s.TopEntities {
		if rest != "" && typ != rest {
			continue
		}
		for _, e := range ents {
			out = append(out, e.Value)
		}
	}
	return out, nil
}

// jsonPath walks rest ("a.b.0") into a JSON value; stage names the value
// in errors.
func jsonPath(raw json.RawMessage, stage, rest string) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("output of %s: %w", stage, err)
	}
	if rest == "" {
		return v, nil
	}
	at := stage
	for _, part := range strings.Split(rest, ".") {
		switch cur := v.(type) {
		case map[string]any:
			next, ok := cur[part]
			if !ok {
				return nil, fmt.Errorf("%w: %s has no field %s", errMissing, at, part)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(cur) {
				return nil, fmt.Errorf("%w: %s has no element %s", errMissing, at, part)
			}
			v = cur[i]
		default:
			return nil, fmt.Errorf("%w: %s is not an object or list", errMissing, at)
		}
		at += "." + part
	}
	return v, nil
}
