package main

import (
	"bytes"
	"fmt"
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

// Killing `docpipe backfill` with SIGKILL at any moment, then running
// `docpipe work` and `backfill` again, moves every document onto the new
// version exactly once: one new workflow each, superseding its old one,
// all completed; the unchanged stage a never runs, and b runs again only
// where a kill cut it short.
func TestBackfillResumesAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it repeatedly; skipped with -short")
	}
	bin := testbin.Docpipe(t)
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

// A backfill starts its workflows through the project's admission: with
// max_concurrent_workflows=1 one runs while the others wait pending,
// however many the machine could take.
func TestBackfillKeepsTheProjectLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := testbin.Docpipe(t)
	home, dir, input := t.TempDir(), t.TempDir(), t.TempDir()
	apply := func(name, marks, hold string) {
		t.Helper()
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, []byte(strings.NewReplacer("MARKS", marks, "HOLD", hold).Replace(heldPipeline)), 0o644); err != nil {
			t.Fatal(err)
		}
		want(t, 0, nil, "pipeline", "apply", file, "--home", home)
	}
	for i := range 3 {
		os.WriteFile(filepath.Join(input, fmt.Sprintf("doc%d.txt", i)), fmt.Appendf(nil, "Document %d.\n\nIt moves to a new version.\n", i), 0o644)
	}
	marks1, marks2, hold := filepath.Join(dir, "marks1"), filepath.Join(dir, "marks2"), filepath.Join(dir, "hold")
	for _, d := range []string{marks1, marks2} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	apply("v1", marks1, hold)
	want(t, 0, nil, "project", "create", "tenant", "--home", home)
	want(t, 0, nil, "run", "--home", home, "--project", "tenant", "--pipeline", "held", "--progress", "none", input)
	apply("v2", marks2, hold)
	want(t, 0, nil, "project", "set", "tenant", "max_concurrent_workflows=1", "--home", home)
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "backfill", "--home", home, "--project", "tenant", "--pipeline", "held@2", "--progress", "none", "--concurrency", "3")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if entries, _ := os.ReadDir(marks2); len(entries) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no backfilled workflow reached the held stage:\n%s", out.String())
		}
	}
	time.Sleep(300 * time.Millisecond) // room for a second one to start, were it let
	running, pending, slots := projectCounts(t, home, "tenant")
	entries, _ := os.ReadDir(marks2)
	os.Remove(hold)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("backfill: %v\n%s", err, out.String())
	}
	if running != 1 || pending != 2 || slots != 1 || len(entries) != 1 {
		t.Errorf("while one held: %d in progress, %d pending, count %d, %d at the stage; want 1, 2, 1, 1", running, pending, slots, len(entries))
	}
	if entries, _ := os.ReadDir(marks2); len(entries) != 3 || !strings.Contains(out.String(), "3 completed, 0 failed") {
		t.Errorf("%d of 3 backfilled workflows ran the stage:\n%s", len(entries), out.String())
	}
}
