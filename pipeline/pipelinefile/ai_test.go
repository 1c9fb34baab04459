package pipelinefile

import (
	"strings"
	"testing"
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
    run: {command: [cat]}
    settings: {model: x}
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
		`bad.yaml:11: `, "settings are for the builtins that take them",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
}
