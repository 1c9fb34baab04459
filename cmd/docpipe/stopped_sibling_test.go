package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/internal/testbin"
)

// stoppedSiblingPipeline runs two document stages side by side: slow would
// answer after five seconds, broken fails at once.
const stoppedSiblingPipeline = `name: beside
stages:
  - name: slow
    scope: document
    needs: [segment_builder]
    run: {command: [sh, -c, "cat >/dev/null; sleep 5; echo '{}'"]}
  - name: broken
    scope: document
    needs: [segment_builder]
    run: {command: [sh, -c, "cat >/dev/null; echo nope >&2; exit 4"]}
`

// A stage stopped because the stage beside it failed says so, and its stop
// is recorded before the run ends: the workflow fails with the failing
// stage's reason, the stopped stage names it, and nothing the stop
// interrupted is logged as an error of its own (before, the stopped stage
// recorded its failure after the run had closed the state file).
func TestStageBesideAFailingOneSaysWhyItStopped(t *testing.T) {
	t.Parallel()
	bin := testbin.Docpipe(t)
	home, dir := t.TempDir(), t.TempDir()
	file, doc := filepath.Join(dir, "beside.yaml"), filepath.Join(dir, "note.md")
	if err := os.WriteFile(file, []byte(stoppedSiblingPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, []byte("# Note\n\nOne short section.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, []string{"beside@1"}, "pipeline", "apply", file, "--home", home)

	cmd := exec.Command(bin, "run", "--home", home, "--pipeline", "beside@1", "--json", "--progress", "none", doc)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("run: %v, want exit 1\nstderr:\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "level=ERROR") {
		t.Errorf("run logged errors:\n%s", stderr.String())
	}
	res := decodeLines[docResult](t, stdout.String())
	if len(res) != 1 || res[0].Status != "failed" || !strings.HasPrefix(res[0].Error, "broken: exit status 4: nope") {
		t.Fatalf("run --json = %+v, want failed by broken", res)
	}

	var shown workflowDetail
	if err := json.Unmarshal([]byte(want(t, 0, nil, "show", "--json", "--home", home, res[0].WorkflowID)), &shown); err != nil {
		t.Fatal(err)
	}
	steps := map[string]namedStep{}
	for _, s := range shown.Steps {
		steps[s.Name] = s
	}
	if s := steps["broken"]; s.Status != "failed" || !strings.Contains(s.Error, "exit status 4: nope") {
		t.Errorf("broken = %+v, want failed with its exit", s)
	}
	if s := steps["slow"]; s.Status != "failed" || s.Error != "stopped: broken: exit status 4: nope" {
		t.Errorf("slow = %s %q, want failed with %q", s.Status, s.Error, "stopped: broken: exit status 4: nope")
	}
}
