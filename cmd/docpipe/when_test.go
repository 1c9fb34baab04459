package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// A stage's `when: {format: [GROUP]}` runs on a document of that group and
// is skipped, with the reason, on one of another: a WAV file runs the
// audio stage and skips the image stage.
func TestWhenFormatGroupsOnAWAVDocument(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no recogniser: the spans are skipped quickly
	home, dir := t.TempDir(), t.TempDir()
	// The stage marks that it ran, reading its request with shell builtins
	// only (PATH is empty).
	script := "#!/bin/sh\nwhile read -r _; do :; done\n: > \"ran-$1\"\necho '{}'\n"
	if err := os.WriteFile(filepath.Join(dir, "mark.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(`name: by-format
stages:
  - name: heard
    needs: [segment_builder]
    run: {command: [./mark.sh, heard]}
    when: {format: [audio]}
  - name: seen
    needs: [segment_builder]
    run: {command: [./mark.sh, seen]}
    when: {format: [image]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	wav := filepath.Join(t.TempDir(), "silence.wav")
	writeSilentWAV(t, wav, 5)
	want(t, 0, []string{"by-format@1 (new)"}, "pipeline", "apply", file, "--home", home)
	out := want(t, 0, nil, "run", wav, "--pipeline", "by-format", "--json", "--progress", "none", "--home", home)
	r := decodeLines[docResult](t, out)[0]

	var st workflowDetail
	if err := json.Unmarshal([]byte(want(t, 0, nil, "status", r.WorkflowID, "--json", "--home", home)), &st); err != nil {
		t.Fatal(err)
	}
	if s := st.Progress.Steps["heard"]; s.Status != pipeline.StepCompleted {
		t.Errorf("heard (when audio) on a WAV file: %+v", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran-heard")); err != nil {
		t.Errorf("the audio stage did not run: %v", err)
	}
	if s := st.Progress.Steps["seen"]; s.Status != pipeline.StepSkipped || s.Error != "when: format wav is not one of image" {
		t.Errorf("seen (when image) on a WAV file: %+v", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran-seen")); err == nil {
		t.Error("the image stage ran on a WAV file")
	}
}
