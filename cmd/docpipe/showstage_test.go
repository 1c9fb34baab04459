package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// show --stage prints a document stage's JSON and a segment stage's
// outputs, one line per segment in index order; batch_size 2 spreads the
// segments over several batch blobs.
func TestShowStage(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "pipeline.yaml")
	body := `name: shown
batch_size: 2
stages:
  - name: words
    scope: segment
    needs: [segment_builder]
    run: {command: [python3, -c, "import json,sys; r=json.load(sys.stdin); print(json.dumps({'seen': r['segment']['index'], 'words': len(r['segment']['text'].split())}))"]}
  - name: segment_analyzer
    needs: [words]
    run: {builtin: segment_analyzer}
  - name: tally
    needs: [segment_analyzer]
    run: {command: [python3, -c, "import json,sys; r=json.load(sys.stdin); print(json.dumps({'file': r['document']['file_name']}))"]}
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, []string{"shown@1 (new)"}, "pipeline", "apply", file, "--home", home)
	res := decodeLines[docResult](t, want(t, 0, nil, "run", "--pipeline", "shown", "--json", "--progress", "none", "--home", home, filepath.Join(docs, "notes.md")))
	id := res[0].WorkflowID
	if res[0].Segments < 3 {
		t.Fatalf("notes.md has %d segments; the test needs more than one batch", res[0].Segments)
	}

	var doc struct {
		File string `json:"file"`
	}
	if err := json.Unmarshal([]byte(want(t, 0, nil, "show", "--stage", "tally", id, "--home", home)), &doc); err != nil || doc.File != "notes.md" {
		t.Fatalf("show --stage tally: %+v, %v", doc, err)
	}

	lines := decodeLines[stageOutputLine](t, want(t, 0, nil, "show", id, "--stage", "words", "--home", home))
	if len(lines) != res[0].Segments {
		t.Fatalf("show --stage words printed %d lines for %d segments", len(lines), res[0].Segments)
	}
	for i, l := range lines {
		var out struct{ Seen, Words int }
		if err := json.Unmarshal(l.Output, &out); err != nil || l.Index != i+1 || out.Seen != i+1 || out.Words == 0 || l.Error != "" {
			t.Errorf("line %d: %+v (output %+v, %v)", i, l, out, err)
		}
	}

	want(t, 1, []string{`no stage "nope"`, "words, segment_analyzer, tally"}, "show", "--stage", "nope", id, "--home", home)
	want(t, 1, []string{"built-in segment_analyzer"}, "show", "--stage", "segment_analyzer", id, "--home", home)
}
