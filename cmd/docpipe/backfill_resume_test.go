package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// Killing `docpipe backfill` with SIGKILL at any moment, then running
// `docpipe work` and `backfill` again, moves every document onto the new
// version exactly once: one new workflow each, superseding its old one,
// all completed; the unchanged stage a never runs, and b runs again only
// where a kill cut it short.
func TestBackfillResumesAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it repeatedly; skipped with -short")
	}
	bin := docpipeBinary(t)
	home, dir, docs := t.TempDir(), t.TempDir(), t.TempDir()
	const n = 8
	for i := range n {
		body := fmt.Sprintf("# One\n\nDocument %d has %s words.\n\n# Two\n\nAnd a second section.\n", i, bytes.Repeat([]byte("many "), i+1))
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("d%d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want(t, 0, nil, "pipeline", "apply", cachePipeline(t, dir, "1", "one"), "--home", home)
	want(t, 0, nil, "run", "--pipeline", "cachex", "--progress", "none", "--home", home, docs)
	// v2's b is slow, so that kills land while it runs.
	file := cachePipeline(t, dir, "1", "two")
	slow := "import time\ntime.sleep(0.3)\n"
	raw, _ := os.ReadFile(filepath.Join(dir, "b.py"))
	os.WriteFile(filepath.Join(dir, "b.py"), append([]byte(slow), raw...), 0o644)
	want(t, 0, []string{"cachex@2"}, "pipeline", "apply", file, "--home", home)
	aBefore := runs(t, dir, "a")

	args := []string{"backfill", "--pipeline", "cachex@2", "--concurrency", "2", "--progress", "none", "--home", home}
	kills := 0
	for _, delay := range []time.Duration{150, 400, 700, 1000, 1400} {
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(delay*time.Millisecond, func() { cmd.Process.Signal(syscall.SIGKILL) })
		cmd.Wait()
		timer.Stop()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			kills++
			if kills == 2 {
				// work takes up what the killed backfill left unfinished.
				want(t, 0, nil, "work", "--progress", "none", "--home", home)
			}
			continue
		}
		break
	}
	if kills == 0 {
		t.Fatal("the backfill always finished before the first kill; nothing was tested")
	}
	t.Logf("killed %d times", kills)
	cli(t, args...)

	var list []pipeline.Workflow
	decodeJSON(t, want(t, 0, nil, "status", "--pipeline", "cachex", "--limit", "0", "--json", "--home", home), &list)
	byID := map[string]pipeline.Workflow{}
	for _, wf := range list {
		byID[wf.ID] = wf
	}
	perDoc := map[string]int{}
	for _, wf := range list {
		if wf.PipelineVersion != 2 {
			continue
		}
		perDoc[wf.DocumentID]++
		if wf.Status != pipeline.WorkflowCompleted {
			t.Errorf("%s: %s on v2, want completed", wf.FileName, wf.Status)
		}
		if old := byID[wf.Supersedes]; old.PipelineVersion != 1 || old.SupersededBy != wf.ID {
			t.Errorf("%s: v2 workflow %s supersedes %+v, want a v1 workflow linked back", wf.FileName, wf.ID, old)
		}
	}
	if len(perDoc) != n {
		t.Errorf("%d documents on v2, want %d", len(perDoc), n)
	}
	for doc, c := range perDoc {
		if c != 1 {
			t.Errorf("document %s has %d workflows on v2, want 1", doc, c)
		}
	}
	if a := runs(t, dir, "a"); a != aBefore {
		t.Errorf("a ran %d times during the backfill, want 0 (reused)", a-aBefore)
	}
	// A kill may cut b short in every document at once (small documents
	// share a slot): each runs it again, at most once per kill.
	bBy := runsBy(t, dir, "b")
	for _, wf := range list {
		if wf.PipelineVersion != 2 {
			continue
		}
		if c := bBy[wf.ID]; c < 1 || c > 1+kills {
			t.Errorf("%s: b ran %d times in %s, want 1 plus at most one per kill (%d)", wf.FileName, c, wf.ID, kills)
		}
	}
	before := runs(t, dir, "b")
	want(t, 0, []string{"nothing to backfill"}, args...)
	want(t, 0, nil, "work", "--progress", "none", "--home", home)
	if after := runs(t, dir, "b"); after != before {
		t.Errorf("b ran %d more times once everything had completed", after-before)
	}
}
