package pipelinefile

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

func TestAIStageSettings(t *testing.T) {
	good := `name: ai
stages:
  - name: analyse
    scope: segment
    run: {builtin: openai_analyzer}
    settings:
      model: llama3.1:8b
      base_url: http://localhost:11434/v1
      temperature: 0
      max_tokens: 800
      schema: {properties: {parties: {type: array}}, required: [parties]}
`
	def, err := Parse("good.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(def, TargetEmbedded); err != nil {
		t.Fatalf("problems: %v", err)
	}
	st, _ := def.Stage("analyse")
	if st.Settings["model"] != "llama3.1:8b" || st.Scope != "segment" {
		t.Fatalf("stage: %+v", st)
	}

	bad := `name: ai
stages:
  - name: analyse
    run: {builtin: bedrock_analyzer}
    settings:
      model: anthropic.claude-3-haiku-20240307-v1:0
      temprature: 0.2
      max_tokens: many
  - name: other
    needs: [segment_builder]
    run: {builtin: graph_builder}
    settings: {model: x}
  - name: mine
    run: {command: [cat]}
    settings: {threshold: 3, labels: [a, b]}
`
	def, err = Parse("bad.yaml", []byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	verr := Validate(def, TargetEmbedded)
	if verr == nil {
		t.Fatal("no problems reported")
	}
	got := verr.Error()
	for _, want := range []string{
		`bad.yaml:7: `, `unknown setting "temprature"`,
		`bad.yaml:8: `, "max_tokens must be a positive whole number",
		`bad.yaml:12: `, `builtin "graph_builder" takes no settings`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "bad.yaml:15") {
		t.Errorf("a command stage's own settings were refused:\n%s", got)
	}
}

// Settings survive being stored (JSON) and written back as a file, so
// pipeline diff shows a changed model or schema.
func TestAIStageSettingsRoundTrip(t *testing.T) {
	src := `name: ai
stages:
  - name: analyse
    scope: segment
    run: {builtin: bedrock_analyzer}
    settings:
      model: anthropic.claude-3-haiku-20240307-v1:0
      region: eu-central-1
      temperature: 0.2
      max_tokens: 800
      schema: {properties: {parties: {type: array, items: {type: string}}}, required: [parties]}
`
	def, err := Parse("ai.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	var stored pipeline.Definition
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	out := Format(stored)
	for _, want := range []string{"settings:", "model: anthropic.claude-3-haiku-20240307-v1:0", "max_tokens: 800", "temperature: 0.2", "parties:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("formatted file lacks %q:\n%s", want, out)
		}
	}
	again, err := Parse("again.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(again, TargetEmbedded); err != nil {
		t.Fatalf("formatted file: %v\n%s", err, out)
	}
	if again.ContentHash() != def.ContentHash() {
		t.Fatalf("file round trip changed the definition:\n%s", out)
	}
}
