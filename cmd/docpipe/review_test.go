package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A review on the embedded engine through the CLI: the run parks the
// workflow, the review is listed and approved with an edit, and `work`
// finishes it with the edited summary.
func TestReviewCommandsApproveThenWork(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	src := `name: reviewed
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
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join("..", "..", "samples", "docs", "notes.md")
	want(t, 0, []string{"reviewed@1 (new)"}, "pipeline", "apply", file, "--home", home)
	want(t, exitWaitingReview, []string{"waiting_review", "waiting for review (docpipe review list"}, "run", "--pipeline", "reviewed@1", "--progress", "none", "--home", home, doc)
	want(t, 0, []string{"waiting_review", "0 in progress, 0 pending, 1 waiting for review (0 overdue)"}, "status", "--home", home)
	list := want(t, 0, []string{".check", "alice"}, "review", "list", "--mine", "alice", "--home", home)
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	want(t, 0, []string{"no reviews waiting"}, "review", "list", "--mine", "bob", "--home", home)
	want(t, 1, []string{"docpipe: review " + id + " is assigned to alice, not bob;"}, "review", "approve", id, "--by", "bob", "--home", home)
	want(t, 2, []string{"--by"}, "review", "approve", id, "--home", home)
	want(t, 0, []string{"claimed by alice"}, "review", "claim", id, "--by", "alice", "--home", home)
	want(t, 0, []string{"approved by alice"}, "review", "approve", id, "--by", "alice", "--set", "summary=Checked by alice.", "--home", home)
	want(t, 1, []string{"docpipe: review " + id + " was already approved by alice; `docpipe review list` shows the reviews waiting\n"}, "review", "reject", id, "--by", "alice", "--home", home)
	want(t, 1, []string{"docpipe: no review " + wfOf(id) + ".nope here;"}, "review", "show", wfOf(id)+".nope", "--home", home)
	want(t, 0, []string{"completed"}, "work", "--home", home, "--progress", "none")
	wf := wfOf(id)
	want(t, 0, []string{"Checked by alice."}, "show", wf, "--summary", "--home", home)
}

func wfOf(reviewID string) string { return strings.Split(reviewID, ".")[0] }
