package embedded_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// chatImitation answers chat.completions with the recorded fixture and
// keeps the requests' user messages, by whether they came with a schema.
type chatImitation struct {
	t       *testing.T
	fixture []byte
	mu      sync.Mutex
	users   []string
}

func (c *chatImitation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-e2e" {
		c.t.Errorf("request %s %s, authorization %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.Model != "llama3.1:8b" || len(req.Messages) < 2 || req.Messages[0].Role != "system" ||
		req.ResponseFormat.Type != "json_schema" || !strings.Contains(string(req.ResponseFormat.JSONSchema.Schema), `"parties"`) {
		c.t.Errorf("request shape: %+v", req)
	}
	c.mu.Lock()
	c.users = append(c.users, req.Messages[len(req.Messages)-1].Content)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(c.fixture)
}

// An OpenAI-compatible analysis per segment and one over the document's
// summaries run through the engine; each stores its answers with the
// model and the tokens billed, and stageoutput.AIUsage adds them up.
func TestOpenAIAnalyzerStagesEndToEnd(t *testing.T) {
	fixture, err := os.ReadFile("../../pipeline/ai/testdata/openai_chat_completion.json")
	if err != nil {
		t.Fatal(err)
	}
	chat := &chatImitation{t: t, fixture: fixture}
	srv := httptest.NewServer(chat)
	defer srv.Close()
	t.Setenv("DOCPIPE_E2E_KEY", "sk-e2e")
	settings := `
      model: llama3.1:8b
      base_url: ` + srv.URL + `/v1
      api_key_env: DOCPIPE_E2E_KEY
      temperature: 0
      schema: {properties: {parties: {type: array, items: {type: string}}}, required: [parties]}`
	def := writePipeline(t, `
name: ai
stages:
  - name: analyse
    scope: segment
    run: {builtin: openai_analyzer}
    settings:`+settings+`
  - name: overview
    scope: document
    needs: [analyse]
    run: {builtin: openai_analyzer}
    settings:`+settings+`
`, nil)
	r := newUserRig(t, def)
	ref, prog := r.run(t, sample("notes.md"))
	wantCompleted(t, prog)
	segments := prog.TotalSegments
	if segments < 2 || prog.SegmentsDone != segments {
		t.Fatalf("want every one of several segments done: %+v", prog)
	}

	var manifest []pipeline.Batch
	if err := json.Unmarshal([]byte(r.blob(t, pipeline.ManifestBlobKey(ref))), &manifest); err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, b := range manifest {
		sc := bufio.NewScanner(strings.NewReader(r.blob(t, pipeline.StageBatchBlobKey(ref, "analyse", b.Batch))))
		for sc.Scan() {
			var l struct {
				Index  int      `json:"index"`
				Model  string   `json:"model"`
				Usage  ai.Usage `json:"usage"`
				Error  string   `json:"error"`
				Output struct {
					Summary string   `json:"summary"`
					Parties []string `json:"parties"`
				} `json:"output"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			if l.Model != "llama3.1:8b" || l.Usage != (ai.Usage{InputTokens: 1117, OutputTokens: 46}) || l.Error != "" ||
				len(l.Output.Parties) != 1 || l.Output.Summary == "" {
				t.Errorf("segment line: %s", sc.Bytes())
			}
			lines++
		}
	}
	if lines != segments {
		t.Errorf("%d segment lines for %d segments", lines, segments)
	}

	var doc struct {
		Output   map[string]any `json:"output"`
		Model    string         `json:"model"`
		Usage    ai.Usage       `json:"usage"`
		Segments int            `json:"segments"`
	}
	if err := json.Unmarshal([]byte(r.blob(t, pipeline.StageOutputBlobKey(ref, "overview"))), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Model != "llama3.1:8b" || doc.Usage != (ai.Usage{InputTokens: 1117, OutputTokens: 46}) || doc.Segments != segments || doc.Output["summary"] == nil {
		t.Errorf("document output: %+v", doc)
	}
	// The document request is the segments' summaries, not their text.
	summary := "A lease for a flat in Berlin, signed by Anna Weber."
	if last := chat.users[len(chat.users)-1]; strings.Count(last, summary) != segments {
		t.Errorf("document request carries %d summaries for %d segments: %.300s", strings.Count(last, summary), segments, last)
	}
	if len(chat.users) != segments+1 {
		t.Errorf("%d chat requests for %d segments and one document", len(chat.users), segments)
	}

	usage, err := stageoutput.AIUsage(context.Background(), r.blobs, ref, def)
	if err != nil {
		t.Fatal(err)
	}
	want := ai.Usage{InputTokens: 1117 * int64(segments+1), OutputTokens: 46 * int64(segments+1)}
	if len(usage) != 1 || usage["llama3.1:8b"] != want {
		t.Errorf("usage %+v, want %+v for llama3.1:8b", usage, want)
	}
}

// countingModels hands every analysis stage the same scripted model and
// counts what it is asked for.
type countingModels struct {
	mu     sync.Mutex
	made   []string // provider and model id, per model made
	chats  int
	answer string
}

func (c *countingModels) Model(_ context.Context, p ai.Provider, s ai.Settings) (ai.Model, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.made = append(c.made, string(p)+" "+s.Model)
	return scriptedModel{c}, nil
}

type scriptedModel struct{ c *countingModels }

func (m scriptedModel) Name() string { return "scripted" }

func (m scriptedModel) Chat(context.Context, ai.Chat) (ai.Reply, error) {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	m.c.chats++
	return ai.Reply{Text: m.c.answer, Usage: ai.Usage{InputTokens: 10, OutputTokens: 2}}, nil
}

const bedrockPipeline = `
name: ai
stages:
  - name: analyse
    scope: segment
    run: {builtin: bedrock_analyzer}
    settings: {model: anthropic.claude-test}
  - name: overview
    scope: document
    needs: [analyse]
    run: {builtin: bedrock_analyzer}
    settings: {model: anthropic.claude-test}
`

// Analysis stages make their models through the clients the binary hands
// them, never a client of their own: every request of a Bedrock pipeline
// reaches the scripted model, and nothing else is asked.
func TestAnalysisStagesUseTheModelsTheyAreHanded(t *testing.T) {
	models := &countingModels{answer: `{"summary": "A lease.", "keywords": ["lease"], "entities": []}`}
	r := newUserRigWith(t, writePipeline(t, bedrockPipeline, nil), models)
	ref, prog := r.run(t, sample("notes.md"))
	wantCompleted(t, prog)
	segments := prog.TotalSegments
	if segments < 2 {
		t.Fatalf("want several segments: %+v", prog)
	}
	if models.chats != segments+1 {
		t.Errorf("the scripted model answered %d chats for %d segments and one document", models.chats, segments)
	}
	for _, m := range models.made {
		if m != string(ai.ProviderBedrock)+" anthropic.claude-test" {
			t.Errorf("model made for %q", m)
		}
	}
	if len(models.made) == 0 {
		t.Error("no model was made through the clients handed over")
	}
	usage, err := stageoutput.AIUsage(context.Background(), r.blobs, ref, r.def)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ai.Usage{InputTokens: 10 * int64(segments+1), OutputTokens: 2 * int64(segments+1)}); usage["scripted"] != want {
		t.Errorf("usage %+v, want %+v for the scripted model", usage, want)
	}
}

// Without model clients an analysis stage fails, saying so, rather than
// reaching for a client itself.
func TestAnalysisStageWithoutModelsFails(t *testing.T) {
	r := newUserRigWith(t, writePipeline(t, bedrockPipeline, nil), nil)
	_, prog := r.run(t, sample("notes.md"))
	if prog.Status != pipeline.WorkflowFailed || !strings.Contains(prog.Error, "no model clients are configured") {
		t.Errorf("status %s, error %q", prog.Status, prog.Error)
	}
}
