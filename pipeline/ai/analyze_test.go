package ai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// scripted answers chats from a list, recording what it was sent.
type scripted struct {
	replies []Reply
	chats   []Chat
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Chat(_ context.Context, c Chat) (Reply, error) {
	s.chats = append(s.chats, c)
	if len(s.replies) == 0 {
		return Reply{}, errors.New("no more replies")
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r, nil
}

const okAnswer = `{"summary":"s","keywords":["k"],"entities":[]}`

func TestAnalyzeValidAnswer(t *testing.T) {
	m := &scripted{replies: []Reply{{Text: "```json\n" + okAnswer + "\n```", Usage: Usage{InputTokens: 10, OutputTokens: 5}}}}
	res, err := Analyze(context.Background(), m, Task{Scope: ScopeSegment, Text: "some text", Prompt: "Leases.", Language: "de"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != okAnswer || res.Usage != (Usage{10, 5}) || res.Requests != 1 {
		t.Fatalf("got %s %+v %d", res.Output, res.Usage, res.Requests)
	}
	sys := m.chats[0].System
	for _, want := range []string{"Leases.", `"de"`, `"summary"`} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
}

func TestAnalyzeCorrectsOnceThenFails(t *testing.T) {
	m := &scripted{replies: []Reply{{Text: "Sure! Here it is.", Usage: Usage{1, 1}}, {Text: okAnswer, Usage: Usage{2, 2}}}}
	res, err := Analyze(context.Background(), m, Task{Scope: ScopeSegment, Text: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 2 || res.Usage != (Usage{3, 3}) {
		t.Fatalf("got %d requests, %+v", res.Requests, res.Usage)
	}
	second := m.chats[1].Messages
	if len(second) != 3 || second[1].Role != RoleAssistant || !strings.Contains(second[2].Text, "not a JSON object") {
		t.Fatalf("correction conversation: %+v", second)
	}

	m = &scripted{replies: []Reply{{Text: `{"summary":1}`}, {Text: `{"summary":"s"}`, StopReason: "max_tokens"}}}
	_, err = Analyze(context.Background(), m, Task{Scope: ScopeSegment, Text: "t"})
	var ae *AnswerError
	if !errors.As(err, &ae) || !strings.Contains(ae.Reason, "schema") || !strings.Contains(ae.Reason, "output token limit") {
		t.Fatalf("want a schema AnswerError naming the cut-off, got %v", err)
	}
}

func TestAnalyzeStageSchemaAddsFields(t *testing.T) {
	s, err := NewSchema(map[string]any{"properties": map[string]any{"parties": map[string]any{"type": "array"}}, "required": []any{"parties"}})
	if err != nil {
		t.Fatal(err)
	}
	m := &scripted{replies: []Reply{{Text: okAnswer}, {Text: okAnswer}}}
	if _, err := Analyze(context.Background(), m, Task{Scope: ScopeSegment, Text: "t", Schema: s}); err == nil {
		t.Fatal("an answer without the stage's required field passed")
	}
	if _, err := NewSchema(map[string]any{"type": "array"}); err == nil {
		t.Fatal("a schema whose answer is not an object compiled")
	}
}

func TestAnalyzeOverLongInputIsChunkedAndMerged(t *testing.T) {
	para := strings.Repeat("word ", 400) // 2,000 bytes
	text := strings.Join([]string{para, para, para, para}, "\n\n")
	var replies []Reply
	for range 20 {
		replies = append(replies, Reply{Text: okAnswer, Usage: Usage{1, 1}})
	}
	m := &scripted{replies: replies}
	res, err := Analyze(context.Background(), m, Task{Scope: ScopeSegment, Text: text, ContextTokens: 1200})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chunks < 4 || res.Requests != res.Chunks+1 {
		t.Fatalf("got %d chunks in %d requests, want every chunk and one merge", res.Chunks, res.Requests)
	}
	total := 0
	for _, c := range m.chats[:res.Chunks] {
		in := c.Messages[0].Text
		if estimateTokens(c.System)+estimateTokens(in) > 1200 {
			t.Fatalf("a chunk of %d bytes exceeds the context", len(in))
		}
		total += strings.Count(in, "word")
	}
	if total != 1600 {
		t.Fatalf("chunks hold %d words, want all 1600", total)
	}
	if !strings.Contains(m.chats[len(m.chats)-1].System, "merge") {
		t.Fatal("the last request is not the merge")
	}
}

func TestAnalyzeFailsWhenNothingFits(t *testing.T) {
	_, err := Analyze(context.Background(), &scripted{}, Task{Scope: ScopeSegment, Text: "t", Prompt: strings.Repeat("p", 3000), ContextTokens: 500})
	var tl *TooLongError
	if !errors.As(err, &tl) {
		t.Fatalf("want TooLongError, got %v", err)
	}
}

func TestAnalyzeDocumentScopeNumbersSegments(t *testing.T) {
	m := &scripted{replies: []Reply{{Text: okAnswer}}}
	res, err := Analyze(context.Background(), m, Task{Scope: ScopeDocument, Parts: []string{"first", "second"}})
	if err != nil {
		t.Fatal(err)
	}
	if in := m.chats[0].Messages[0].Text; !strings.Contains(in, "Segment 2:\nsecond") {
		t.Fatalf("input %q", in)
	}
	var out map[string]any
	if json.Unmarshal(res.Output, &out) != nil || out["summary"] != "s" {
		t.Fatalf("output %s", res.Output)
	}
}

func TestSplitKeepsEveryByteOnBoundaries(t *testing.T) {
	s := "ab cd\nef ghij" + strings.Repeat("é", 10)
	parts := split(s, 6)
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	if squeeze(s) != squeeze(strings.Join(parts, "")) {
		t.Fatalf("split lost text: %q", parts)
	}
	for _, p := range parts {
		if len(p) > 6 || !utf8.ValidString(p) {
			t.Fatalf("bad piece %q", p)
		}
	}
}

// An answer is checked against the whole schema: the default fields and
// their types, nested requirements and a stage's additions; a fenced
// object is accepted and comes back compact.
func TestSchemaParse(t *testing.T) {
	s, err := NewSchema(map[string]any{
		"properties": map[string]any{"amount": map[string]any{"type": "integer", "minimum": 0}},
		"required":   []any{"amount"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, answer, why string
	}{
		{"valid", `{"summary":"s","keywords":["k"],"entities":[{"text":"Hamburg","type":"place"}],"amount":3}`, ""},
		{"fenced", "```json\n{\"summary\":\"s\",\"keywords\":[],\"entities\":[],\"amount\":0}\n```", ""},
		{"missing default field", `{"keywords":[],"entities":[],"amount":1}`, "does not match the schema"},
		{"missing stage field", `{"summary":"s","keywords":[],"entities":[]}`, "does not match the schema"},
		{"wrong type", `{"summary":1,"keywords":[],"entities":[],"amount":1}`, "does not match the schema"},
		{"nested requirement", `{"summary":"s","keywords":[],"entities":[{"text":"x"}],"amount":1}`, "does not match the schema"},
		{"not an integer", `{"summary":"s","keywords":[],"entities":[],"amount":1.5}`, "does not match the schema"},
		{"below the minimum", `{"summary":"s","keywords":[],"entities":[],"amount":-1}`, "does not match the schema"},
		{"not JSON", `{"summary":`, "not a JSON object"},
		{"trailing text", `{"summary":"s","keywords":[],"entities":[],"amount":1} and more`, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, why := s.parse(tc.answer)
			if tc.why == "" {
				if why != "" || !json.Valid(out) || bytes.ContainsAny(out, " \n") {
					t.Fatalf("parse = %s, %q; want the answer, compact", out, why)
				}
				return
			}
			if out != nil || !strings.Contains(why, tc.why) {
				t.Fatalf("parse = %s, %q; want a reason with %q", out, why, tc.why)
			}
		})
	}
	if _, err := NewSchema(map[string]any{"properties": map[string]any{"amount": map[string]any{"minimum": "zero"}}}); err == nil {
		t.Fatal("a schema with a malformed keyword compiled")
	}
}
