package ai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Scopes an analysis works on.
const (
	ScopeSegment  = "segment"
	ScopeDocument = "document"
)

// DefaultContextTokens is the input budget when a stage names none: well
// inside the context of every current chat model.
const DefaultContextTokens = 8000

// bytesPerToken estimates tokens from bytes. Real tokenizers average about
// four bytes a token on prose; three keeps the estimate on the safe side
// for other scripts and code.
const bytesPerToken = 3

// Task is one analysis.
type Task struct {
	Scope string // ScopeSegment or ScopeDocument
	// Text is the segment's text; for document scope, Parts are the
	// segments' summaries in order.
	Text  string
	Parts []string
	// Prompt is the project's document prompt: what the documents are and
	// what to look for.
	Prompt   string
	Language string
	Schema   *Schema
	// ContextTokens bounds the input of one request (0: the default); the
	// answer's tokens come on top.
	ContextTokens int
}

// Result is a finished analysis.
type Result struct {
	Output json.RawMessage `json:"output"`
	Usage  Usage           `json:"usage"`
	// Requests is how many chats it took (chunks, merges, corrections).
	Requests int `json:"requests"`
	Chunks   int `json:"chunks"`
}

// AnswerError is an answer that stayed malformed after the correction.
type AnswerError struct{ Reason string }

func (e *AnswerError) Error() string { return "malformed answer: " + e.Reason }

// TooLongError is an input that cannot be cut to fit the model's context.
type TooLongError struct{ Reason string }

func (e *TooLongError) Error() string { return "input too long: " + e.Reason }

// Analyze runs t on m. Errors from m pass through unchanged; a malformed
// answer is an *AnswerError, an input that cannot fit a *TooLongError.
// The usage of a failed analysis is returned too: it was billed.
func Analyze(ctx context.Context, m Model, t Task) (Result, error) {
	if t.Schema == nil {
		t.Schema = DefaultSchema()
	}
	budget := t.ContextTokens
	if budget <= 0 {
		budget = DefaultContextTokens
	}
	a := &analysis{m: m, t: t}
	// What the input may use: the budget less the instructions.
	room := budget - estimateTokens(a.system(false))
	if room < 64 {
		return Result{}, &TooLongError{Reason: fmt.Sprintf("the prompt and schema alone take about %d of the %d context tokens", budget-room, budget)}
	}
	text := t.Text
	if t.Scope == ScopeDocument {
		text = numbered(t.Parts)
	}
	chunks := split(text, room*bytesPerToken)
	a.res.Chunks = len(chunks)
	answers := make([]string, len(chunks))
	for i, c := range chunks {
		out, err := a.ask(ctx, false, c)
		if err != nil {
			return a.res, err
		}
		answers[i] = string(out)
		a.res.Output = out
	}
	// Merge partial answers, in groups that fit, until one is left.
	for len(answers) > 1 {
		groups, err := group(answers, room*bytesPerToken)
		if err != nil {
			return a.res, &TooLongError{Reason: fmt.Sprintf("%v, over a context of %d tokens", err, budget)}
		}
		if len(groups) >= len(answers) {
			return a.res, &TooLongError{Reason: fmt.Sprintf("%d partial answers do not fit a context of %d tokens two at a time", len(answers), budget)}
		}
		merged := make([]string, 0, len(groups))
		for _, g := range groups {
			out, err := a.ask(ctx, true, g)
			if err != nil {
				return a.res, err
			}
			merged = append(merged, string(out))
			a.res.Output = out
		}
		answers = merged
	}
	return a.res, nil
}

// mergeSeparator divides segments and partial answers.
const mergeSeparator = "\n\n"

// group packs whole answers, in order, into inputs of at most max bytes.
func group(answers []string, max int) ([]string, error) {
	var groups []string
	cur := ""
	for i, ans := range answers {
		if len(ans) > max {
			return nil, fmt.Errorf("partial answer %d alone is about %d tokens", i+1, estimateTokens(ans))
		}
		if cur != "" && len(cur)+len(mergeSeparator)+len(ans) > max {
			groups = append(groups, cur)
			cur = ""
		}
		if cur != "" {
			cur += mergeSeparator
		}
		cur += ans
	}
	return append(groups, cur), nil
}

type analysis struct {
	m   Model
	t   Task
	res Result
}

func (a *analysis) system(merge bool) string {
	var b strings.Builder
	switch {
	case merge:
		b.WriteString("You merge partial analyses of consecutive parts of one text into a single analysis of the whole text. Combine summaries into one, keep the most important keywords and every distinct entity.\n")
	case a.t.Scope == ScopeDocument:
		b.WriteString("You analyse a whole document from the summaries of its segments, given in order.\n")
	default:
		b.WriteString("You analyse one segment (a page or section) of a document.\n")
	}
	if a.t.Language != "" {
		fmt.Fprintf(&b, "The document's language is %q; write the summary in that language.\n", a.t.Language)
	}
	if a.t.Prompt != "" {
		b.WriteString("What the documents are and what to look for:\n")
		b.WriteString(a.t.Prompt)
		b.WriteString("\n")
	}
	b.WriteString("Answer with one JSON object and nothing else, valid against this JSON schema:\n")
	b.Write(a.t.Schema.raw)
	return b.String()
}

// ask sends one input and returns the valid answer, correcting once.
func (a *analysis) ask(ctx context.Context, merge bool, input string) (json.RawMessage, error) {
	c := Chat{System: a.system(merge), Schema: a.t.Schema.raw, Messages: []Message{{Role: RoleUser, Text: input}}}
	var reason string
	for attempt := 0; attempt < 2; attempt++ {
		r, err := a.m.Chat(ctx, c)
		a.res.Requests++
		a.res.Usage = a.res.Usage.Add(r.Usage)
		if err != nil {
			return nil, err
		}
		out, why := a.t.Schema.parse(r.Text)
		if why == "" {
			return out, nil
		}
		if r.StopReason == "max_tokens" || r.StopReason == "length" {
			why += " (the answer was cut off at the output token limit)"
		}
		reason = why
		c.Messages = append(c.Messages,
			Message{Role: RoleAssistant, Text: r.Text},
			Message{Role: RoleUser, Text: "That answer is not valid: " + why + ". Answer again with only the JSON object, valid against the schema."})
	}
	return nil, &AnswerError{Reason: reason}
}

// numbered lists the parts of a document in order.
func numbered(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(mergeSeparator)
		}
		fmt.Fprintf(&b, "Segment %d:\n%s", i+1, p)
	}
	return b.String()
}

// estimateTokens is a conservative token count of s.
func estimateTokens(s string) int { return (len(s) + bytesPerToken - 1) / bytesPerToken }

// split cuts s into pieces of at most max bytes, at the last paragraph
// break, else line break, else space in each window, else mid-word (at a
// UTF-8 boundary) when a window has none.
func split(s string, max int) []string {
	var out []string
	for len(s) > max {
		cut := -1
		for _, sep := range []string{"\n\n", "\n", " "} {
			if i := strings.LastIndex(s[:max], sep); i > 0 {
				cut = i
				break
			}
		}
		if cut < 0 {
			cut = max
			for cut > 0 && !utf8Start(s[cut]) {
				cut--
			}
		}
		out = append(out, strings.TrimSpace(s[:cut]))
		s = strings.TrimLeft(s[cut:], " \n")
	}
	if strings.TrimSpace(s) != "" || len(out) == 0 {
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Schema is the JSON schema an answer must satisfy, resolved.
//
// The validator is github.com/google/jsonschema-go: it prepares nothing at
// start-up, where a validator that compiles the meta-schemas of every
// draft in its package init costs every docpipe command (even --version)
// several milliseconds and 1.7 MB, for the AI stages alone.
type Schema struct {
	raw      json.RawMessage
	resolved *jsonschema.Resolved
}

// defaultSchema is summary, keywords and entities: what every analysis
// answers, whatever else a stage's schema adds.
const defaultSchema = `{
  "type": "object",
  "required": ["summary", "keywords", "entities"],
  "properties": {
    "summary": {"type": "string"},
    "keywords": {"type": "array", "items": {"type": "string"}},
    "entities": {"type": "array", "items": {
      "type": "object",
      "required": ["text", "type"],
      "properties": {"text": {"type": "string"}, "type": {"type": "string"}}
    }}
  }
}`

// DefaultSchema is the schema of a stage that sets none.
func DefaultSchema() *Schema {
	s, err := NewSchema(nil)
	if err != nil {
		panic(err) // a constant: cannot happen
	}
	return s
}

// NewSchema compiles a stage's schema: an object schema whose properties
// and required fields are added to summary, keywords and entities (nil:
// just those).
func NewSchema(extra map[string]any) (*Schema, error) {
	var base map[string]any
	if err := json.Unmarshal([]byte(defaultSchema), &base); err != nil {
		return nil, err
	}
	if extra != nil {
		if t, ok := extra["type"]; ok && t != "object" {
			return nil, fmt.Errorf("schema: the answer is a JSON object, so type must be object, not %v", t)
		}
		props := base["properties"].(map[string]any)
		if p, ok := extra["properties"]; ok {
			pm, ok := p.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("schema: properties must be a mapping")
			}
			for k, v := range pm {
				props[k] = v
			}
		}
		if r, ok := extra["required"]; ok {
			rl, ok := r.([]any)
			if !ok {
				return nil, fmt.Errorf("schema: required must be a list")
			}
			req := base["required"].([]any)
			for _, v := range rl {
				if !containsValue(req, v) {
					req = append(req, v)
				}
			}
			base["required"] = req
		}
		for k, v := range extra {
			if k != "properties" && k != "required" && k != "type" {
				base[k] = v
			}
		}
	}
	raw, err := json.Marshal(base)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	var doc jsonschema.Schema
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	resolved, err := doc.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return &Schema{raw: raw, resolved: resolved}, nil
}

func containsValue(list []any, v any) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// JSON is the schema as sent to a model.
func (s *Schema) JSON() json.RawMessage { return s.raw }

// parse returns the answer as compact JSON, or why it is not valid. A
// Markdown code fence around the object is tolerated: models add one.
func (s *Schema) parse(text string) (json.RawMessage, string) {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "```") {
		t = strings.TrimPrefix(t, "```json")
		t = strings.TrimPrefix(t, "```")
		t = strings.TrimSuffix(strings.TrimSpace(t), "```")
	}
	var inst any
	if err := json.Unmarshal([]byte(t), &inst); err != nil {
		return nil, fmt.Sprintf("not a JSON object (%v)", err)
	}
	if err := s.resolved.Validate(inst); err != nil {
		return nil, "does not match the schema: " + strings.Join(strings.Fields(err.Error()), " ")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(t)); err != nil {
		return nil, fmt.Sprintf("not a JSON object (%v)", err)
	}
	return buf.Bytes(), ""
}
