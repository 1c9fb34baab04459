package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/pipeline"
)

// heldPipeline's stage "hold" marks that its workflow runs (a file named
// after it in MARKS) and waits while HOLD exists.
const heldPipeline = `name: held
stages:
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: hold
    needs: [segment_analyzer]
    timeout: 600s
    run: {command: [python3, -c, "import json,os,sys,time; r=json.load(sys.stdin); open(os.path.join('MARKS', r['workflow_id']), 'w').close()\nwhile os.path.exists('HOLD'): time.sleep(0.05)\nprint('{}')"]}
`

// A project with max_concurrent_workflows=2: `docpipe run` on three
// documents runs two and keeps the third pending; the run is SIGKILLed
// while both hold their slots. `docpipe work` then finds the project's
// count equal to the workflows in progress, resumes them, admits the third
// and ends with the count back at zero; the project takes a new document.
func TestAdmissionAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it; skipped with -short")
	}
	bin := testbin.Docpipe(t)
	home, dir := t.TempDir(), t.TempDir()
	marks, hold := filepath.Join(dir, "marks"), filepath.Join(dir, "hold")
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "held.yaml")
	src := strings.NewReplacer("MARKS", marks, "HOLD", hold).Replace(heldPipeline)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	input := t.TempDir()
	for i := range 3 {
		body := fmt.Sprintf("Document %d.\n\nIt waits for its turn in the project.\n", i)
		if err := os.WriteFile(filepath.Join(input, fmt.Sprintf("doc%d.txt", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want(t, 0, []string{"held@1"}, "pipeline", "apply", file, "--home", home)
	want(t, 0, []string{"tenant"}, "project", "create", "tenant", "--home", home)
	want(t, 0, []string{"2 workflows at once"}, "project", "set", "tenant", "max_concurrent_workflows=2", "--home", home)

	cmd := exec.Command(bin, "run", "--home", home, "--project", "tenant", "--pipeline", "held@1", "--progress", "none", "--concurrency", "3", input)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if entries, _ := os.ReadDir(marks); len(entries) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("two workflows never reached the held stage")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // killed

	running, pending, slots := projectCounts(t, home, "tenant")
	if running != 2 || pending != 1 || slots != 2 {
		t.Fatalf("after the kill: %d in progress, %d pending, count %d; want 2, 1, 2", running, pending, slots)
	}

	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	out := want(t, 0, nil, "work", "--home", home, "--progress", "none")
	if n := strings.Count(out, " completed"); n != 3 {
		t.Fatalf("work completed %d of 3:\n%s", n, out)
	}
	if running, pending, slots := projectCounts(t, home, "tenant"); running != 0 || pending != 0 || slots != 0 {
		t.Fatalf("after work: %d in progress, %d pending, count %d", running, pending, slots)
	}
	if entries, _ := os.ReadDir(marks); len(entries) != 3 {
		t.Fatalf("%d workflows reached the held stage, want 3", len(entries))
	}
	more := filepath.Join(dir, "more.txt")
	if err := os.WriteFile(more, []byte("One more document.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, []string{"completed"}, "run", "--home", home, "--project", "tenant", "--pipeline", "held@1", "--progress", "none", more)
}

// projectCounts reads a project's workflows in progress and pending, and
// its running count.
func projectCounts(t *testing.T, home, projectID string) (running, pending, slots int) {
	t.Helper()
	b, err := backend.OpenLocal(home)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for status, n := range map[pipeline.WorkflowStatus]*int{pipeline.WorkflowInProgress: &running, pipeline.WorkflowPending: &pending} {
		list, err := b.Repo.ListByStatus(ctx, status, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if p.ProjectID == projectID {
				*n++
			}
		}
	}
	s, err := b.Repo.GetProjectSlots(ctx, projectID)
	if err != nil {
		t.Fatal(err)
	}
	return running, pending, s.Running
}
