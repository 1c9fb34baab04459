package statemachine

import (
	"strconv"
	"testing"

	"github.com/docpipe/docpipe/statemachine/asl"
)

// A user's segment stage runs its command once per segment, each bounded by
// the stage's timeout: the batch task allows a full batch of them, capped.
// A user's task has a margin over its stage's own timeout, so the stage's
// timeout (which names it) fires first; builtins keep theirs as written.
func TestSegmentStageTimeoutCoversTheBatch(t *testing.T) {
	for _, c := range []struct {
		batch, timeout, want int
	}{
		{batch: 10, timeout: 30, want: 300 + userStageMarginSeconds},
		{batch: 100, timeout: 3600, want: maxBatchTaskSeconds},
	} {
		def := parsePipeline(t, `name: timed
batch_size: `+strconv.Itoa(c.batch)+`
stages:
  - name: per_segment
    scope: segment
    needs: [segment_builder]
    run: {command: [python3, x.py]}
    timeout: `+strconv.Itoa(c.timeout)+`s
  - name: segment_analyzer
    needs: [per_segment]
    run: {builtin: segment_analyzer}
    timeout: 45s
  - name: whole
    needs: [segment_analyzer]
    run: {command: [python3, y.py]}
    timeout: 20s
`)
		sm := generateParsed(t, def, ModeQueue)
		batch := sm.States.ByName[StateSegmentBatches].(*asl.Map).ItemProcessor.Machine.States.ByName
		for name, want := range map[string]int{"per_segment": c.want, "segment_analyzer": 45} {
			if got := batch[name].(*asl.Task).TimeoutSeconds; got == nil || *got != want {
				t.Errorf("batch %d × %ds: %s TimeoutSeconds %v, want %d", c.batch, c.timeout, name, deref(got), want)
			}
		}
		if got := sm.States.ByName["whole"].(*asl.Task).TimeoutSeconds; got == nil || *got != 20+userStageMarginSeconds {
			t.Errorf("document stage TimeoutSeconds %v, want %d", deref(got), 20+userStageMarginSeconds)
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
