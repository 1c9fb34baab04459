package localrun_test

import (
	"testing"
	"time"

	"github.com/docpipe/docpipe/cmd/internal/localrun"
	"github.com/docpipe/docpipe/pipeline"
)

// A Watcher reads a workflow from its step item until told its run ended,
// reads it once more marked Ended, and never again.
func TestWatcherReadsUntilEnded(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, newHeldEngine())
	got, err := rt.Register(t.Context(), smallFiles(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	wf := got[0].Registration.Workflow
	readings := make(chan localrun.Watched, 1000)
	w := localrun.Watch(rt.Repo(), time.Millisecond, func(t localrun.Watched, p pipeline.StepProgress) {
		if p.WorkflowID == t.Workflow.ID {
			readings <- t
		}
	})
	w.Add("doc0.txt", wf)
	if r := <-readings; r.File != "doc0.txt" || r.Workflow.ID != wf.ID || r.Ended {
		t.Fatalf("first reading %+v", r)
	}
	w.End(wf.ID)
	for r := <-readings; !r.Ended; r = <-readings {
	}
	w.Stop() // its last pass reads nothing more of the ended workflow
	if len(readings) > 0 {
		t.Errorf("%d readings after the one marked Ended", len(readings))
	}
}
