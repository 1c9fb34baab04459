package pipeline_test

import (
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

func TestDoingSaysTheStepOrTheOutcome(t *testing.T) {
	t.Parallel()
	running := map[string]pipeline.StepState{
		"segment_prep": {Status: pipeline.StepCompleted, StartedAt: "2026-11-23T10:00:00Z"},
		"zeta":         {Status: pipeline.StepInProgress, StartedAt: "2026-11-23T10:00:01Z"},
		"beta":         {Status: pipeline.StepInProgress, StartedAt: "2026-11-23T10:00:02Z"},
		"alpha":        {Status: pipeline.StepInProgress, StartedAt: "2026-11-23T10:00:02Z"},
	}
	tied := map[string]pipeline.StepState{
		"beta":  {Status: pipeline.StepInProgress, StartedAt: "2026-11-23T10:00:02Z"},
		"alpha": {Status: pipeline.StepInProgress, StartedAt: "2026-11-23T10:00:02Z"},
	}
	done := map[string]pipeline.StepState{"segment_prep": {Status: pipeline.StepCompleted}}
	for _, c := range []struct {
		p    pipeline.StepProgress
		want string
	}{
		{pipeline.StepProgress{Status: pipeline.WorkflowInProgress, Steps: running}, "zeta"},
		{pipeline.StepProgress{Status: pipeline.WorkflowInProgress, Steps: tied}, "alpha"},
		{pipeline.StepProgress{Status: pipeline.WorkflowInProgress, Steps: done}, "waiting"},
		{pipeline.StepProgress{Status: pipeline.WorkflowPending}, "waiting"},
		{pipeline.StepProgress{Status: pipeline.WorkflowWaitingReview, Steps: done}, "waiting_review"},
		{pipeline.StepProgress{Status: pipeline.WorkflowCompleted, SegmentsFailed: 1, Steps: running}, "completed, 1 segment failed"},
		{pipeline.StepProgress{Status: pipeline.WorkflowFailed}, "failed"},
	} {
		for range 10 { // map order changes from run to run
			if got := c.p.Doing(); got != c.want {
				t.Fatalf("%+v: Doing() = %q, want %q", c.p, got, c.want)
			}
		}
	}
}

func TestFailedStepIsTheFirstToFail(t *testing.T) {
	t.Parallel()
	steps := map[string]pipeline.StepState{
		"segment_prep": {Status: pipeline.StepCompleted, EndedAt: "2026-11-23T10:00:00.000000000Z"},
		"report":       {Status: pipeline.StepFailed, EndedAt: "2026-11-23T10:00:03.000000000Z"},
		"check":        {Status: pipeline.StepFailed, EndedAt: "2026-11-23T10:00:02.000000000Z"},
		"zeta":         {Status: pipeline.StepFailed, EndedAt: "2026-11-23T10:00:02.000000000Z"},
	}
	for _, c := range []struct {
		p    pipeline.StepProgress
		want string
	}{
		{pipeline.StepProgress{Status: pipeline.WorkflowFailed, Steps: steps}, "check"},
		{pipeline.StepProgress{Status: pipeline.WorkflowFailed, Steps: map[string]pipeline.StepState{"segment_prep": {Status: pipeline.StepCompleted}}}, ""},
		{pipeline.StepProgress{Status: pipeline.WorkflowInProgress, Steps: steps}, ""},
		{pipeline.StepProgress{Status: pipeline.WorkflowCompleted, Steps: steps}, ""},
	} {
		for range 10 { // map order changes from run to run
			if got := c.p.FailedStep(); got != c.want {
				t.Fatalf("%+v: FailedStep() = %q, want %q", c.p, got, c.want)
			}
		}
	}
}
