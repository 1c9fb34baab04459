package main

import (
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

func TestStepTextShowsProgressAndTimeLeft(t *testing.T) {
	t.Parallel()
	prog := pipeline.StepProgress{Status: pipeline.WorkflowInProgress, Steps: map[string]pipeline.StepState{
		"segment_prep": {Status: pipeline.StepCompleted},
		"ocr": {Status: pipeline.StepInProgress, StartedAt: "2030-01-01T00:00:00Z",
			Progress: &pipeline.StepRunProgress{Done: 12, Total: 300, Unit: "pages", At: "2030-01-01T00:00:24Z"}},
	}}
	if got, want := stepText(prog), "ocr 12/300 pages, ETA 9m36s"; got != want {
		t.Errorf("stepText = %q, want %q", got, want)
	}
	prog.Steps["ocr"] = pipeline.StepState{Status: pipeline.StepInProgress}
	if got := stepText(prog); got != "ocr" {
		t.Errorf("without progress: %q", got)
	}
}
