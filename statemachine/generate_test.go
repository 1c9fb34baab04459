package statemachine

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/statemachine/asl"
)

var update = flag.Bool("update", false, "rewrite the committed definitions from the generator")

// DefinitionPath is where the generated definition of a mode is committed.
func definitionPath(mode Mode) string {
	return filepath.Join("definitions", "docpipe."+string(mode)+".asl.json")
}

// TestCommittedDefinitionsMatchGenerator fails when someone changes the
// pipeline definition or the generator without running `make generate`.
func TestCommittedDefinitionsMatchGenerator(t *testing.T) {
	for _, mode := range Modes {
		got, err := Generate(pipelinefile.Default(), mode)
		if err != nil {
			t.Fatal(err)
		}
		path := definitionPath(mode)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run `make generate`)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `make generate`", path)
		}
	}
}

func TestCommittedDefinitionsAreEmbedded(t *testing.T) {
	for _, mode := range Modes {
		want, err := os.ReadFile(definitionPath(mode))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Definition(mode)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("embedded %s differs from the file", mode)
		}
	}
}

func TestGenerateShapes(t *testing.T) {
	def := pipelinefile.Default()
	for _, mode := range Modes {
		raw, err := Generate(def, mode)
		if err != nil {
			t.Fatal(err)
		}
		var sm struct {
			StartAt string
			States  map[string]map[string]any
		}
		if err := json.Unmarshal(raw, &sm); err != nil {
			t.Fatal(err)
		}
		if sm.StartAt != pipeline.StepSegmentPrep {
			t.Errorf("%s: StartAt = %q", mode, sm.StartAt)
		}
		// Document stages are top-level states and the segment stage runs
		// inside the Distributed Map, chained in definition order; every
		// top-level state routes failures to the recorder.
		top := []string{pipeline.StepSegmentPrep, pipeline.StepFormatParser, pipeline.StepOCR, pipeline.StepSegmentBuilder,
			StateSegmentBatches, pipeline.StepGraphBuilder, pipeline.StepDocumentSummarizer}
		for i, name := range top {
			s, ok := sm.States[name]
			if !ok {
				t.Fatalf("%s: no state %q", mode, name)
			}
			want := StateFinalize
			if i+1 < len(top) {
				want = top[i+1]
			}
			if s["Next"] != want {
				t.Errorf("%s: %s.Next = %v, want %s", mode, name, s["Next"], want)
			}
			if !strings.Contains(string(mustJSON(t, s["Catch"])), StateWorkflowFailed) {
				t.Errorf("%s: %s does not catch into %s", mode, name, StateWorkflowFailed)
			}
		}
		m := sm.States[StateSegmentBatches]
		if m["Type"] != "Map" {
			t.Fatalf("%s: %q is %v, want a Map", mode, StateSegmentBatches, m["Type"])
		}
		if !strings.Contains(string(mustJSON(t, m["ItemProcessor"])), `"`+pipeline.StepSegmentAnalyzer+`"`) {
			t.Errorf("%s: the Map does not run %s", mode, pipeline.StepSegmentAnalyzer)
		}
		if strings.Contains(string(raw), "ItemBatcher") {
			t.Errorf("%s: uses ItemBatcher, which the emulators cannot parse", mode)
		}
		if m["MaxConcurrency"] != float64(def.MaxConcurrency) {
			t.Errorf("%s: MaxConcurrency = %v", mode, m["MaxConcurrency"])
		}
	}
}

func TestNonRetryableStageHasNoTransientRetry(t *testing.T) {
	def := pipelinefile.Default()
	def.Stages[0].Retryable = false
	raw, err := Generate(def, ModeLocal)
	if err != nil {
		t.Fatal(err)
	}
	var sm struct{ States map[string]map[string]any }
	if err := json.Unmarshal(raw, &sm); err != nil {
		t.Fatal(err)
	}
	if r, ok := sm.States[def.Stages[0].Name]["Retry"]; ok {
		t.Errorf("non-retryable stage has Retry %v", r)
	}
	if _, ok := sm.States[def.Stages[1].Name]["Retry"]; !ok {
		t.Errorf("retryable stage lost its Retry")
	}
}

func TestPermanentErrorsAreNeverRetried(t *testing.T) {
	for _, mode := range Modes {
		raw, _ := Generate(pipelinefile.Default(), mode)
		for _, name := range steperr.PermanentNames {
			if bytes.Contains(raw, []byte(`"`+name+`"`)) {
				t.Errorf("%s: permanent error %s appears in a retrier", mode, name)
			}
		}
	}
}

func TestRender(t *testing.T) {
	raw, err := Generate(pipelinefile.Default(), ModeLambda)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(raw, nil); err == nil || !strings.Contains(err.Error(), VarStepsFunctionARN) {
		t.Fatalf("Render without vars: err = %v, want missing %s", err, VarStepsFunctionARN)
	}
	arn := "arn:aws:lambda:eu-west-1:123456789012:function:docpipe-steps"
	out, err := Render(raw, map[string]string{VarStepsFunctionARN: arn})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("${")) || !bytes.Contains(out, []byte(arn)) || !json.Valid(out) {
		t.Errorf("rendered definition is wrong:\n%s", out)
	}
}

func TestGenerateRejectsBadDefinitions(t *testing.T) {
	if _, err := Generate(pipeline.Definition{Name: "x"}, ModeLocal); err == nil {
		t.Error("no stages: want error")
	}
	if _, err := Generate(pipelinefile.Default(), Mode("ftp")); err == nil {
		t.Error("unknown mode: want error")
	}
	def := pipelinefile.Default()
	def.Stages[2].Scope = "galaxy"
	if _, err := Generate(def, ModeLocal); err == nil {
		t.Error("unknown scope: want error")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The generated definitions must be valid ASL for the strict parser and the
// validator, in every mode (placeholders rendered first).
func TestGeneratedDefinitionsValidate(t *testing.T) {
	vars := map[string]string{
		VarStepsFunctionARN:  "arn:aws:lambda:us-east-1:123456789012:function:docpipe-steps",
		VarActivityARNPrefix: "arn:aws:states:us-east-1:123456789012:activity:docpipe-",
		VarTaskQueueURL:      "https://sqs.us-east-1.amazonaws.com/123456789012/docpipe-tasks",
	}
	for _, mode := range Modes {
		raw, err := Generate(pipelinefile.Default(), mode)
		if err != nil {
			t.Fatal(err)
		}
		rendered, err := Render(raw, vars)
		if err != nil {
			t.Fatal(err)
		}
		sm, err := asl.Parse(rendered)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if err := asl.Validate(sm); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
	}
}
