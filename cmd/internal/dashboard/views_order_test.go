package dashboard

import (
	"slices"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// Stages the built-in pipeline does not know are shown in the order they
// started, not in map order; the built-in ones keep their pipeline order.
func TestStepViewsOrderUserStagesByStart(t *testing.T) {
	p := pipeline.StepProgress{Steps: map[string]pipeline.StepState{
		"segment_prep": {Status: pipeline.StepCompleted, StartedAt: "2026-11-23T10:00:00Z"},
		"zeta":         {Status: pipeline.StepCompleted, StartedAt: "2026-11-23T10:00:01Z"},
		"alpha":        {Status: pipeline.StepInProgress, StartedAt: "2026-11-23T10:00:02Z"},
		"later":        {Status: pipeline.StepPending},
		"beta":         {Status: pipeline.StepInProgress, StartedAt: "2026-11-23T10:00:02Z"},
	}}
	for range 20 { // map order changes from run to run
		var names []string
		for _, v := range stepViews(p) {
			names = append(names, v.Name)
		}
		if want := []string{"segment_prep", "zeta", "alpha", "beta", "later"}; !slices.Equal(names, want) {
			t.Fatalf("order %v, want %v", names, want)
		}
		if got := p.Doing(); got != "alpha" {
			t.Fatalf("current step %q, want alpha", got)
		}
	}
}
