package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var samplePipeline = filepath.Join("..", "..", "samples", "pipelines", "redact", "pipeline.yaml")

// want fails unless docpipe args exits with code and prints every part
// (stdout and stderr together).
func want(t *testing.T, code int, parts []string, args ...string) string {
	t.Helper()
	stdout, stderr, got := cliAll(args...)
	if got != code {
		t.Fatalf("docpipe %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, stdout, stderr)
	}
	for _, p := range parts {
		if !strings.Contains(stdout+stderr, p) {
			t.Fatalf("docpipe %s: output lacks %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), p, stdout, stderr)
		}
	}
	return stdout
}

func TestPipelineCommands(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	v2 := filepath.Join(t.TempDir(), "pipeline.yaml")
	data, err := os.ReadFile(samplePipeline)
	if err != nil {
		t.Fatal(err)
	}
	changed := regexp.MustCompile(`(?m)^description: .*$`).ReplaceAllString(string(data), "description: Second version.")
	if err := os.WriteFile(v2, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nstages:\n  - name: x\n    run: {builtin: nope}\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	want(t, 0, []string{samplePipeline + ": ok"}, "pipeline", "validate", samplePipeline)
	want(t, 1, []string{bad + ":4"}, "pipeline", "validate", samplePipeline, bad)
	want(t, 2, []string{"--target"}, "pipeline", "validate", "--target", "moon", samplePipeline)
	want(t, 1, []string{bad + ":"}, "pipeline", "apply", bad, "--home", home)

	want(t, 0, []string{"redact@1 (new)"}, "pipeline", "apply", samplePipeline, "--home", home)
	want(t, 0, []string{"redact@1 (unchanged)"}, "pipeline", "apply", samplePipeline, "--home", home)
	want(t, 0, []string{"redact@2 (new)"}, "pipeline", "apply", v2, "--home", home)

	want(t, 0, []string{"redact", "2", "Second version."}, "pipeline", "list", "--home", home)
	want(t, 0, []string{"redact@1", "segment_builder", "command python3 redact.py", "segment_analyzer"}, "pipeline", "show", "redact@1", "--home", home)
	hist := want(t, 0, []string{"redact@2", "redact@1"}, "pipeline", "history", "redact", "--home", home)
	if strings.Index(hist, "redact@2") > strings.Index(hist, "redact@1") {
		t.Fatalf("history is not newest first:\n%s", hist)
	}
	want(t, 0, []string{"--- redact@1", "+++ redact@2", "+description: Second version."}, "pipeline", "diff", "redact@1", "redact@2", "--home", home)
	want(t, 0, []string{"are the same"}, "pipeline", "diff", "redact@2", "redact", "--home", home)

	want(t, 1, []string{"pipeline nope not found"}, "pipeline", "show", "nope", "--home", home)
	want(t, 1, []string{"not found"}, "pipeline", "history", "nope", "--home", home)
	want(t, 2, []string{"number from 1"}, "pipeline", "show", "redact@0", "--home", home)
	want(t, 2, []string{"two NAME@VERSION"}, "pipeline", "diff", "redact@1", "--home", home)
}

// A workflow records the version it was started on; applying a new one
// later changes nothing for it, and new documents run the new one.
func TestRunRecordsPipelineVersion(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	doc := filepath.Join(docs, "notes.md")
	want(t, 0, []string{"completed"}, "run", doc, "--home", home, "--progress", "none")
	want(t, 0, []string{"docpipe@1"}, "status", "--pipeline", "docpipe", "--home", home)
	want(t, 0, []string{"docpipe@1 (unchanged)"}, "pipeline", "apply", filepath.Join("..", "..", "pipeline", "pipelinefile", "default.yaml"), "--home", home)
	want(t, 1, []string{"pipeline nope not found"}, "run", doc, "--pipeline", "nope", "--home", home)
	want(t, 0, []string{"no workflows run pipeline redact"}, "status", "--pipeline", "redact", "--home", home)
	want(t, 2, []string{"--pipeline lists workflows"}, "status", "--pipeline", "docpipe", "--failed", "--home", home)
}

func TestProjectCommands(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	want(t, 0, []string{"project:   acme", "language:  de", "pipeline:  redact@2"},
		"project", "create", "acme", "--language", "de", "--pipeline", "redact@2", "--home", home)
	want(t, 1, []string{"project acme exists"}, "project", "create", "acme", "--home", home)
	want(t, 0, []string{"ocr:       off, languages deu,eng", "prompt:    Supplier contracts"},
		"project", "set", "acme", "ocr.enabled=false", "ocr.languages=deu,eng", "prompt=Supplier contracts", "--home", home)
	want(t, 0, []string{`"document_prompt": "Supplier contracts"`, `"enabled": false`}, "project", "show", "acme", "--json", "--home", home)
	want(t, 2, []string{"unknown project setting"}, "project", "set", "acme", "colour=blue", "--home", home)
	want(t, 2, []string{"not KEY=VALUE"}, "project", "set", "acme", "language", "--home", home)
	want(t, 2, []string{"ISO 639-1"}, "project", "set", "acme", "language=German", "--home", home)
	want(t, 1, []string{"project nope not found"}, "project", "show", "nope", "--home", home)
	// The project's default pipeline is what its documents run.
	want(t, 1, []string{"pipeline redact@2 not found"}, "run", filepath.Join(docs, "notes.md"), "--project", "acme", "--home", home, "--progress", "none")
}
