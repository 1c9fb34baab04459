package ai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenAIReplaysChatCompletion(t *testing.T) {
	body := fixture(t, "openai_chat_completion.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			t.Errorf("request %s, auth %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		var req struct {
			Model          string `json:"model"`
			Messages       []oaMessage
			Temperature    *float64 `json:"temperature"`
			ResponseFormat struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Name   string          `json:"name"`
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		if req.Model != "llama3.1:8b" || len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Content != "Die Miete beträgt 900 EUR." {
			t.Errorf("request: %+v", req)
		}
		if req.Temperature == nil || *req.Temperature != 0 {
			t.Errorf("temperature %v, want 0 sent", req.Temperature)
		}
		if req.ResponseFormat.Type != "json_schema" || !strings.Contains(string(req.ResponseFormat.JSONSchema.Schema), `"parties"`) {
			t.Errorf("response_format: %+v", req.ResponseFormat)
		}
		w.Write(body)
	}))
	defer srv.Close()
	zero := 0.0
	m := &OpenAI{BaseURL: srv.URL + "/v1/", Model: "llama3.1:8b", APIKey: "sk-test", Temperature: &zero}
	schema, err := NewSchema(map[string]any{"properties": map[string]any{"parties": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}, "required": []any{"parties"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(context.Background(), m, Task{Scope: ScopeSegment, Text: "Die Miete beträgt 900 EUR.", Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage != (Usage{1117, 46}) || !strings.Contains(string(res.Output), `"parties":["Anna Weber"]`) {
		t.Fatalf("got %s %+v", res.Output, res.Usage)
	}
}

func TestOpenAIRetriesThrottlingThenAnswers(t *testing.T) {
	body := fixture(t, "openai_chat_completion.json")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, `{"error":{"message":"Rate limit reached"}}`, http.StatusTooManyRequests)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	m := &OpenAI{BaseURL: srv.URL, Model: "llama3.1:8b", Format: FormatNone}
	r, err := m.Chat(context.Background(), Chat{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err != nil || calls.Load() != 2 || r.Usage.OutputTokens != 46 {
		t.Fatalf("got %v after %d calls", err, calls.Load())
	}
}

func TestOpenAIErrorsAreClassified(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy/chat/completions":
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		case "/slow/chat/completions":
			select { // until the client gives up, or the test ends
			case <-r.Context().Done():
			case <-stop:
			}
		default:
			http.Error(w, `{"error":{"message":"model not found"}}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	defer close(stop)
	chat := Chat{Messages: []Message{{Role: RoleUser, Text: "x"}}}
	var transient *steperr.TransientError
	var failed *steperr.StageFailedError

	_, err := (&OpenAI{BaseURL: srv.URL + "/busy", Attempts: 1}).Chat(context.Background(), chat)
	if !errors.As(err, &transient) {
		t.Errorf("503: want transient, got %v", err)
	}
	_, err = (&OpenAI{BaseURL: srv.URL + "/missing", Model: "nope"}).Chat(context.Background(), chat)
	if !errors.As(err, &failed) || !strings.Contains(err.Error(), "model not found") {
		t.Errorf("404: want stage failed with the reason, got %v", err)
	}
	_, err = (&OpenAI{BaseURL: srv.URL + "/slow", Attempts: 1, HTTP: &http.Client{Timeout: 50 * time.Millisecond}}).Chat(context.Background(), chat)
	if !errors.As(err, &transient) {
		t.Errorf("timeout: want transient, got %v", err)
	}
}
