package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/internal/testbin"
)

// A state home and a document named relative to the working directory:
// a command stage runs in its pipeline file's directory, yet the paths it
// is handed (the source, its needs' outputs) lead to the files.
func TestRelativeHomeReachesCommandStages(t *testing.T) {
	t.Parallel()
	bin := testbin.Docpipe(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "pipelines"), 0o755); err != nil {
		t.Fatal(err)
	}
	pipelineFile := `name: reads
stages:
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: reader
    needs: [segment_analyzer]
    scope: document
    run: {command: [python3, -c, "import json,sys; r=json.load(sys.stdin)['inputs']; [open(p).read() for p in r['needs'].values()]; open(r['source']).read(); print('{}')"]}
`
	files := map[string]string{
		"pipelines/reads.yaml": pipelineFile,
		"doc.txt":              "A document named relative to where docpipe runs.\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	docpipe := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docpipe %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	docpipe("pipeline", "apply", "pipelines/reads.yaml", "--home", "state")
	if out := docpipe("run", "--home", "state", "--pipeline", "reads", "--progress", "none", "doc.txt"); !strings.Contains(out, "completed") {
		t.Fatalf("run:\n%s", out)
	}
}
