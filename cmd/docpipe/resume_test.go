package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// outcome is what must be identical between an interrupted and an
// uninterrupted run: everything but ids and timestamps.
type outcome struct {
	Status, Error           string
	Segments, Failed        int
	Done, Skipped           int
	Summary, Graph, AllText string
}

func collect(t *testing.T, home string, results []docResult) map[string]outcome {
	t.Helper()
	out := map[string]outcome{}
	for _, r := range results {
		raw, err := cli(t, "status", "--home", home, "--json", r.WorkflowID)
		if err != nil {
			t.Fatal(err)
		}
		var d workflowDetail
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			t.Fatal(err)
		}
		o := outcome{Status: r.Status, Error: r.Error, Segments: r.Segments, Failed: r.FailedSegments,
			Done: d.Progress.SegmentsDone, Skipped: d.Progress.SegmentsSkipped}
		if r.Status == "completed" {
			o.Summary, _ = cli(t, "show", "--home", home, "--summary", r.WorkflowID)
			o.Graph, _ = cli(t, "show", "--home", home, "--graph", r.WorkflowID)
			o.AllText, _ = cli(t, "show", "--home", home, "--text", r.WorkflowID)
		}
		for _, s := range d.Steps {
			if s.Status == "in_progress" {
				t.Errorf("%s: step %s left in progress", r.File, s.Name)
			}
		}
		out[filepath.Base(r.File)] = o
	}
	return out
}

// Killing `docpipe run` with SIGKILL at any moment and running the same
// command again finishes every document exactly once, with results
// identical to an uninterrupted run.
func TestResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it repeatedly; skipped with -short")
	}
	bin := testbin.Docpipe(t)
	input := t.TempDir()
	if err := pdfgen.WriteFile(filepath.Join(input, "big.pdf"), pdfgen.Options{Pages: 300, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"notes.md", "report.docx", "page.html"} {
		b, err := os.ReadFile(filepath.Join(docs, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(input, name), b, 0o644)
	}
	os.WriteFile(filepath.Join(input, "empty.txt"), nil, 0o644)
	args := func(home string) []string {
		return []string{"run", "--home", home, "--json", "--progress", "none", "--pdf", "go", input}
	}

	refHome := t.TempDir()
	refOut, _ := cli(t, args(refHome)...)
	want := collect(t, refHome, decodeLines[docResult](t, refOut))

	home := t.TempDir()
	kills := 0
	for _, delay := range []time.Duration{30, 80, 150, 250, 400, 600, 900, 1300, 1800, 2500} {
		cmd := exec.Command(bin, args(home)...)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(delay*time.Millisecond, func() { cmd.Process.Signal(syscall.SIGKILL) })
		err := cmd.Wait()
		timer.Stop()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			kills++
			continue
		}
		_ = err // finished before the kill: the rest is checked below
		break
	}
	if kills == 0 {
		t.Fatal("the run always finished before the first kill; nothing was tested")
	}
	t.Logf("killed %d times", kills)
	out, _ := cli(t, args(home)...)
	results := decodeLines[docResult](t, out)
	got := collect(t, home, results)
	for file, w := range want {
		g, ok := got[file]
		if !ok {
			t.Errorf("%s: missing from the resumed run", file)
			continue
		}
		if g != w {
			t.Errorf("%s: resumed run differs:\n got %+v\nwant %+v", file, short(g), short(w))
		}
	}
	for _, r := range results {
		if r.Status == "completed" && r.Segments != 0 && got[filepath.Base(r.File)].Done+got[filepath.Base(r.File)].Skipped+r.FailedSegments != r.Segments {
			t.Errorf("%s: segments counted %d+%d+%d of %d", r.File, got[filepath.Base(r.File)].Done, got[filepath.Base(r.File)].Skipped, r.FailedSegments, r.Segments)
		}
	}
	// One more run does no work at all.
	out, _ = cli(t, args(home)...)
	for _, r := range decodeLines[docResult](t, out) {
		if !r.Reused {
			t.Errorf("%s was processed again after completion", r.File)
		}
	}
	if st, _ := cli(t, "status", "--home", home, "--json"); strings.TrimSpace(st) != "[]" {
		t.Errorf("workflows left in progress: %s", st)
	}
}

func short(o outcome) outcome {
	cut := func(s string) string {
		if len(s) > 80 {
			return s[:80] + "…"
		}
		return s
	}
	o.Summary, o.Graph, o.AllText = cut(o.Summary), cut(o.Graph), cut(o.AllText)
	return o
}
