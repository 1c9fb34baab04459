package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// A command stage's progress reports on stderr reach the step item while
// it runs, so status (and the dashboard and the run bars) show them.
func TestCommandStageProgressWhileItRuns(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "pipeline.yaml")
	// The stage reports 2 of 5 rows, then waits for the test to have seen
	// them before it finishes.
	body := `name: counted
stages:
  - name: segment_analyzer
    needs: [segment_builder]
    run: {builtin: segment_analyzer}
  - name: tally
    needs: [segment_analyzer]
    timeout: 2m
    run: {command: [sh, -c, "cat >/dev/null; echo '{\"progress\":{\"done\":2,\"total\":5,\"unit\":\"rows\"}}' >&2; while [ ! -e release ]; do sleep 0.05; done; echo '{\"progress\":{\"done\":5,\"total\":5,\"unit\":\"rows\"}}' >&2; echo '{\"rows\":5}'"]}
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, []string{"counted@1 (new)"}, "pipeline", "apply", file, "--home", home)
	done, exited := make(chan []docResult, 1), make(chan struct{})
	// Whatever happens below, the stage ends before the test does.
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "release"), nil, 0o644)
		<-exited
	})
	go func() {
		defer close(exited)
		out, _ := cli(t, "run", "--pipeline", "counted", "--json", "--progress", "none", "--home", home, filepath.Join(docs, "notes.md"))
		var res []docResult
		for _, line := range strings.Split(out, "\n") {
			var r docResult
			if json.Unmarshal([]byte(line), &r) == nil {
				res = append(res, r)
			}
		}
		done <- res
	}()

	var seen *pipeline.StepRunProgress
	for deadline := time.Now().Add(time.Minute); seen == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the running stage never showed its progress in status")
		}
		out, err := cli(t, "status", "--json", "--home", home)
		if err != nil {
			continue // the run may not have created its state yet
		}
		var list []pipeline.StepProgress
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("status --json: %v: %s", err, out)
		}
		for _, p := range list {
			if st := p.Steps["tally"]; st.Status == pipeline.StepInProgress && st.Progress != nil {
				seen = st.Progress
			}
		}
	}
	if seen.Done != 2 || seen.Total != 5 || seen.Unit != "rows" {
		t.Errorf("progress while running %+v, want 2/5 rows", seen)
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if len(res) != 1 || res[0].Status != "completed" {
		t.Fatalf("run: %+v", res)
	}
}
