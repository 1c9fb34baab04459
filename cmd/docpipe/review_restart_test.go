package main

import (
	"bufio"
	"bytes"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/pipeline"
)

// reviewedPipeline is a pipeline whose last stage waits for alice.
const reviewedPipeline = `name: reviewed
stages:
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: document_summarizer
    needs: [segment_analyzer]
    run: {builtin: document_summarizer}
  - name: check
    needs: [document_summarizer]
    run: {review: {assign: [alice]}, due: 72h}
`

// A process killed while its workflow waits for a review loses nothing:
// serve parks an upload on its review and is SIGKILLed; a work pass
// leaves the undecided review alone, and once it is approved the next
// work pass completes the workflow.
func TestReviewSurvivesSIGKILLWhileWaiting(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it; skipped with -short")
	}
	bin := testbin.Docpipe(t)
	home := t.TempDir()
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(file, []byte(reviewedPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, []string{"reviewed@1 (new)"}, "pipeline", "apply", file, "--home", home)

	srv := exec.Command(bin, "serve", "--home", home, "--pipeline", "reviewed@1", "--listen", "127.0.0.1:0")
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill() // a no-op once killed below
	line, err := bufio.NewReader(out).ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "docpipe dashboard on ")
	if err != nil || !ok {
		t.Fatalf("serve said %q, %v", line, err)
	}
	uploadFile(t, strings.TrimSuffix(base, "/"), filepath.Join(docs, "notes.md"))

	// Parked once its review is listed: the run ended, nothing runs.
	var reviews []pipeline.Review
	for deadline := time.Now().Add(60 * time.Second); len(reviews) == 0; time.Sleep(100 * time.Millisecond) {
		list, _ := cli(t, "review", "list", "--json", "--home", home)
		if time.Now().After(deadline) {
			st, _ := cli(t, "status", "--home", home)
			t.Fatalf("the upload never waited for its review: reviews %s; status:\n%s", list, st)
		}
		reviews = decodeLines[pipeline.Review](t, list) // one review a line
	}
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = srv.Wait()
	id := reviews[0].ID
	wf, _, _ := strings.Cut(id, ".")
	want(t, 0, []string{"waiting_review", "1 waiting for review"}, "status", "--home", home)

	// Undecided: work leaves it parked.
	want(t, 0, nil, "work", "--home", home, "--progress", "none")
	want(t, 0, []string{"waiting_review"}, "status", wf, "--home", home)

	want(t, 0, []string{"approved by alice"}, "review", "approve", id, "--by", "alice", "--set", "summary=Approved after a crash.", "--home", home)
	want(t, 0, []string{wf + " notes.md completed"}, "work", "--home", home, "--progress", "none")
	want(t, 0, []string{"completed"}, "status", wf, "--home", home)
	want(t, 0, []string{"Approved after a crash."}, "show", wf, "--summary", "--home", home)
	want(t, 0, []string{"no analyses in progress"}, "status", "--home", home)
}

// uploadFile posts one file to a running dashboard.
func uploadFile(t *testing.T, base, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	part.Write(data)
	mw.Close()
	resp, err := http.Post(base+"/api/uploads", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("upload: %s", resp.Status)
	}
}
