package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTryoutPipeline writes a one-stage pipeline file with the given
// description and returns its path.
func writeTryoutPipeline(t *testing.T, dir, description string) string {
	t.Helper()
	path := filepath.Join(dir, "pipeline.yaml")
	data := "name: tryout\ndescription: " + description + "\nstages:\n  - name: segment_analyzer\n    run: {builtin: segment_analyzer}\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// `run --pipeline FILE` applies the file (storing nothing for content
// already stored), says which version that is and runs on it.
func TestRunPipelineFile(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	file := writeTryoutPipeline(t, dir, "First.")
	notes, letter := filepath.Join(docs, "notes.md"), filepath.Join(docs, "letter.txt")

	out := want(t, 0, []string{"completed"}, "run", notes, "--pipeline", file, "--home", home, "--progress", "none")
	if !strings.HasPrefix(out, "tryout@1 (new)\n") {
		t.Errorf("run does not start with the applied version:\n%s", out)
	}

	// Under --json the version goes to stderr: stdout is JSON only.
	stdout, stderr, code := cliAll("run", letter, "--pipeline", file, "--json", "--home", home, "--progress", "none")
	if code != 0 || !strings.Contains(stderr, "tryout@1 (unchanged)") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	r := decodeLines[docResult](t, stdout)[0]
	if _, pipe := workflowSteps(t, home, r.WorkflowID); pipe != "tryout@1" {
		t.Errorf("the workflow ran %s, want tryout@1", pipe)
	}
	if hist := want(t, 0, nil, "pipeline", "history", "tryout", "--home", home); strings.Contains(hist, "tryout@2") {
		t.Errorf("the same content stored a second version:\n%s", hist)
	}

	writeTryoutPipeline(t, dir, "Second.")
	want(t, 0, []string{"tryout@2 (new)"}, "run", notes, "--pipeline", file, "--home", home, "--progress", "none")
	// A name and a version keep working.
	want(t, 0, []string{"completed"}, "run", notes, "--pipeline", "tryout@1", "--home", home, "--progress", "none")

	want(t, 1, []string{"missing.yaml", "no such file"}, "run", notes, "--pipeline", filepath.Join(dir, "missing.yaml"), "--home", home)
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("name: bad\nstages:\n  - name: x\n    run: {builtin: nope}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 1, []string{bad + ":4"}, "run", notes, "--pipeline", bad, "--home", home)
}

// `ingest --pipeline FILE` registers the documents on the applied version.
func TestIngestPipelineFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file := writeTryoutPipeline(t, t.TempDir(), "First.")
	stdout, stderr, code := cliAll("ingest", "--no-start", "--json", filepath.Join(docs, "notes.md"), "--pipeline", file, "--home", home)
	if code != 0 || !strings.Contains(stderr, "tryout@1 (new)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r := decodeLines[ingestResult](t, stdout)[0]
	var st workflowDetail
	if err := json.Unmarshal([]byte(want(t, 0, nil, "status", r.WorkflowID, "--json", "--home", home)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Progress.Pipeline != "tryout" || st.Progress.PipelineVersion != 1 {
		t.Errorf("registered on %s@%d, want tryout@1", st.Progress.Pipeline, st.Progress.PipelineVersion)
	}
}

// `serve --pipeline FILE` applies the file and starts uploads on it.
func TestServePipelineFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file := writeTryoutPipeline(t, t.TempDir(), "First.")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var stdout bytes.Buffer
	f := &runFlags{app: &app{stdout: &stdout, stderr: io.Discard, home: home, project: "default"}, concurrency: 2, pdf: "go", pipeline: file}
	base := startServe(ctx, t, f)
	if !strings.Contains(stdout.String(), "tryout@1 (new)") {
		t.Errorf("serve did not say which version it applied:\n%s", stdout.String())
	}

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, err := mw.CreateFormFile("file", "notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "A few words to analyse.\n")
	mw.Close()
	resp, err := http.Post(base+"/api/uploads", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var uploaded struct {
		Uploads []struct {
			WorkflowID string `json:"workflow_id"`
		} `json:"uploads"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&uploaded); err != nil || len(uploaded.Uploads) != 1 {
		t.Fatalf("upload: %s %v %+v", resp.Status, err, uploaded)
	}
	var st workflowDetail
	if err := json.Unmarshal([]byte(want(t, 0, nil, "status", uploaded.Uploads[0].WorkflowID, "--json", "--home", home)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Progress.Pipeline != "tryout" || st.Progress.PipelineVersion != 1 {
		t.Errorf("the upload runs %s@%d, want tryout@1", st.Progress.Pipeline, st.Progress.PipelineVersion)
	}
}

// On AWS, serve starts uploads on the deployment's state machine, so a
// pipeline it would not use is refused rather than ignored.
func TestServeOnAWSRefusesPipeline(t *testing.T) {
	t.Parallel()
	want(t, 2, []string{"--pipeline works with serve on this machine only"}, "serve", "--table", "T", "--pipeline", "redact")
}
