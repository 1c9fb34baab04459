package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gatedPipeline writes a pipeline whose document stage "hold" waits for a
// file named release in the pipeline's folder (touching started first),
// followed by a stage named last; the segments are analysed as usual.
func gatedPipeline(t *testing.T, dir, last string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := `name: gated
stages:
  - name: segment_analyzer
    scope: segment
    needs: [segment_builder]
    run: {builtin: segment_analyzer}
  - name: hold
    needs: [segment_builder]
    run: {command: [sh, -c, "cat >/dev/null; touch started; while [ ! -f release ]; do sleep 0.05; done; echo '{}'"]}
    timeout: 10m
  - name: ` + last + `
    needs: [hold]
    run: {command: [sh, -c, "cat >/dev/null; echo '{}'"]}
`
	path := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitForFile polls until path exists or ctx ends.
func waitForFile(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never appeared: %v", path, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// workflowSteps returns the step names and the pipeline recorded on a
// workflow, as `status WORKFLOW --json` shows them.
func workflowSteps(t *testing.T, home, id string) (steps []string, pipeline string) {
	t.Helper()
	out := want(t, 0, nil, "status", id, "--json", "--home", home)
	var st workflowDetail
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status %s: %v\n%s", id, err, out)
	}
	for name, s := range st.Progress.Steps {
		if s.Status != "completed" {
			t.Errorf("workflow %s: step %s is %s (%s)", id, name, s.Status, s.Error)
		}
		steps = append(steps, name)
	}
	slices.Sort(steps)
	return steps, st.Progress.Pipeline + "@" + strconv.Itoa(st.Progress.PipelineVersion)
}

// A workflow runs the pipeline version it was registered on, whichever
// entry point drives it: a version applied while it runs, or before `work`
// picks it up, changes nothing for it; new documents run the new version.
func TestWorkflowsKeepTheirPipelineVersion(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	home := t.TempDir()
	v1Dir, v2Dir := filepath.Join(t.TempDir(), "v1"), filepath.Join(t.TempDir(), "v2")
	v1 := gatedPipeline(t, v1Dir, "first_only")
	v2 := gatedPipeline(t, v2Dir, "second_only")
	if err := os.WriteFile(filepath.Join(v2Dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, []string{"gated@1 (new)"}, "pipeline", "apply", v1, "--home", home)

	// Registered on v1, processed only after v2 is applied.
	ingested := decodeLines[ingestResult](t, want(t, 0, nil, "ingest", "--no-start", "--json", "--pipeline", "gated", "--home", home, filepath.Join(docs, "letter.txt")))

	type result struct {
		out  string
		code int
	}
	running := make(chan result, 1)
	go func() {
		stdout, stderr, code := cliAll("run", "--pipeline", "gated", "--json", "--progress", "none", "--home", home, filepath.Join(docs, "notes.md"))
		running <- result{stdout + stderr, code}
	}()
	waitForFile(ctx, t, filepath.Join(v1Dir, "started"))
	want(t, 0, []string{"gated@2 (new)"}, "pipeline", "apply", v2, "--home", home)
	if err := os.WriteFile(filepath.Join(v1Dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-running:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if r.code != 0 {
		t.Fatalf("run while v2 was applied: exit %d\n%s", r.code, r.out)
	}
	ran := decodeLines[docResult](t, strings.SplitN(r.out, "\n", 2)[0])

	want(t, 0, []string{ingested[0].WorkflowID, "completed"}, "work", "--home", home)
	later := decodeLines[docResult](t, want(t, 0, nil, "run", "--pipeline", "gated", "--json", "--progress", "none", "--home", home, filepath.Join(docs, "page.html")))

	v1Steps := []string{"first_only", "format_parser", "hold", "ocr", "segment_analyzer", "segment_builder", "segment_prep"}
	v2Steps := []string{"format_parser", "hold", "ocr", "second_only", "segment_analyzer", "segment_builder", "segment_prep"}
	for _, c := range []struct {
		what, id, version string
		steps             []string
	}{
		{"the run v2 was applied during", ran[0].WorkflowID, "gated@1", v1Steps},
		{"the document ingested on v1, worked on after v2", ingested[0].WorkflowID, "gated@1", v1Steps},
		{"a document run after v2", later[0].WorkflowID, "gated@2", v2Steps},
	} {
		steps, version := workflowSteps(t, home, c.id)
		if version != c.version || !slices.Equal(steps, c.steps) {
			t.Errorf("%s: ran %s with steps %v, want %s with %v", c.what, version, steps, c.version, c.steps)
		}
	}
}
