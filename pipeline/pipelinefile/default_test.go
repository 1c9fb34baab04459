package pipelinefile

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// TestDefaultIsTodaysPipeline pins the embedded file to the pipeline docpipe
// ran before definitions were files, so the generated state machines stay
// as committed.
func TestDefaultIsTodaysPipeline(t *testing.T) {
	t.Parallel()
	doc := func(name, label string, timeout int, needs ...string) pipeline.Stage {
		return pipeline.Stage{Name: name, Label: label, Scope: pipeline.ScopeDocument, Needs: needs,
			Run: pipeline.RunSpec{Builtin: name}, Retryable: true, Retry: pipeline.DefaultRetry, TimeoutSeconds: timeout}
	}
	analyzer := doc(pipeline.StepSegmentAnalyzer, "Analyze segments", 900, pipeline.StepSegmentBuilder)
	analyzer.Scope = pipeline.ScopeSegment
	want := []pipeline.Stage{
		doc(pipeline.StepSegmentPrep, "Sniff format, validate and plan", 300),
		doc(pipeline.StepFormatParser, "Extract text", 900, pipeline.StepSegmentPrep),
		doc(pipeline.StepOCR, "OCR image pages", 900, pipeline.StepFormatParser),
		doc(pipeline.StepSegmentBuilder, "Write segments and manifest", 900, pipeline.StepOCR),
		analyzer,
		doc(pipeline.StepGraphBuilder, "Build graph", 900, pipeline.StepSegmentAnalyzer),
		doc(pipeline.StepDocumentSummarizer, "Summarize document", 900, pipeline.StepGraphBuilder),
	}
	def := Default()
	if !reflect.DeepEqual(def.Stages, want) {
		t.Errorf("stages:\n got %+v\nwant %+v", def.Stages, want)
	}
	if def.Name != "docpipe" || def.BatchSize != 100 || def.MaxConcurrency != 8 {
		t.Errorf("name %q, batch size %d, max concurrency %d; want docpipe, 100, 8", def.Name, def.BatchSize, def.MaxConcurrency)
	}
	if pipeline.DefaultRetry != (pipeline.RetryPolicy{MaxAttempts: 4, IntervalSeconds: 1, BackoffRate: 2, MaxDelaySeconds: 30}) {
		t.Errorf("DefaultRetry = %+v", pipeline.DefaultRetry)
	}
	for _, target := range []Target{TargetEmbedded, TargetAWS} {
		if err := Validate(def, target); err != nil {
			t.Errorf("%s: %v", target, err)
		}
	}
}

// TestDefaultCopies: a caller changing its copy changes no one else's.
func TestDefaultCopies(t *testing.T) {
	t.Parallel()
	a := Default()
	a.Stages[0].Retryable = false
	a.Stages[1].Needs[0] = "x"
	if b := Default(); !b.Stages[0].Retryable || b.Stages[1].Needs[0] != pipeline.StepSegmentPrep {
		t.Fatalf("Default shares its stages: %+v", b.Stages[:2])
	}
}

// TestDefaultRoundTrips: the default survives being stored as JSON (how
// versions are kept) and being written back as a file.
func TestDefaultRoundTrips(t *testing.T) {
	t.Parallel()
	def := Default()
	raw, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	var back pipeline.Definition
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.ContentHash() != def.ContentHash() || !reflect.DeepEqual(back.Stages, def.Stages) {
		t.Fatalf("JSON round trip changed the definition:\n%s", raw)
	}
	// JSON is YAML: the stored form parses as a file again, once its
	// fields are spelled the way files spell them.
	again, err := Parse("again.yaml", Format(def))
	if err != nil {
		t.Fatal(err)
	}
	if again.ContentHash() != def.ContentHash() {
		t.Fatalf("file round trip changed the definition:\n%s", Format(def))
	}
}
