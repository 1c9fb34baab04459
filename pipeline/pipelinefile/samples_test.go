package pipelinefile

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// TestSamplesValidate: the example pipelines users copy are valid on the
// embedded engine. Their commands run python3, so it must be installed.
func TestSamplesValidate(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is not installed; the sample pipelines' commands need it")
	}
	files, err := filepath.Glob("../../samples/pipelines/*/*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("sample pipelines: %v, %v", files, err)
	}
	for _, f := range files {
		def, err := Load(f)
		if err == nil {
			err = Validate(def, TargetEmbedded)
		}
		if err != nil {
			t.Errorf("%v", err)
		}
	}
	// http-enrich is a DAG: enrich and graph_builder run side by side and
	// document_summarizer joins them.
	def, err := Load("../../samples/pipelines/http-enrich/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if def.HasPath("enrich", "graph_builder") || def.HasPath("graph_builder", "enrich") ||
		!def.HasPath("enrich", pipeline.StepDocumentSummarizer) || !def.HasPath("graph_builder", pipeline.StepDocumentSummarizer) {
		t.Errorf("http-enrich stages: %+v", def.Stages)
	}
}
