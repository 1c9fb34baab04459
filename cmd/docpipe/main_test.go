package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// docs are the bundled sample documents of every supported format.
var docs = filepath.Join("..", "..", "samples", "docs")

// cli runs the docpipe command in-process and returns stdout and the error.
func cli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	if err != nil {
		t.Logf("docpipe %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), err
}

func decodeLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var list []T
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		list = append(list, v)
	}
	return list
}

func TestRunSamplesThenReuse(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	out, err := cli(t, "run", "--home", home, "--json", "--progress", "none", docs)
	if err != nil {
		t.Fatal(err)
	}
	first := decodeLines[docResult](t, out)
	if len(first) < 5 {
		t.Fatalf("want a result per sample, got %d", len(first))
	}
	for _, r := range first {
		if r.Status != "completed" || r.Segments == 0 || r.WorkflowID == "" || r.Error != "" {
			t.Errorf("%+v", r)
		}
	}
	// A second run does no work and reports the same workflows.
	out, err = cli(t, "run", "--home", home, "--json", "--progress", "none", docs)
	if err != nil {
		t.Fatal(err)
	}
	second := decodeLines[docResult](t, out)
	for i := range first {
		if second[i].WorkflowID != first[i].WorkflowID || !second[i].Reused || second[i].Status != "completed" {
			t.Errorf("rerun: %+v, first %+v", second[i], first[i])
		}
	}

	// Nothing is in progress afterwards; the status index is sparse.
	out, err = cli(t, "status", "--home", home, "--json")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("status: %q, %v", out, err)
	}
	id := first[0].WorkflowID
	out, err = cli(t, "status", "--home", home, "--json", id)
	if err != nil {
		t.Fatal(err)
	}
	var detail workflowDetail
	if err := json.Unmarshal([]byte(out), &detail); err != nil {
		t.Fatal(err)
	}
	if len(detail.Steps) < 7 || len(detail.Transitions) == 0 {
		t.Errorf("detail has %d steps, %d transitions", len(detail.Steps), len(detail.Transitions))
	}
	for _, s := range detail.Steps {
		if s.Status != "completed" && s.Status != "skipped" && s.Status != "pending" {
			t.Errorf("step %s is %s", s.Name, s.Status)
		}
	}

	text, err := cli(t, "show", "--home", home, "--text", id)
	if err != nil || len(strings.TrimSpace(text)) == 0 {
		t.Errorf("show --text: %q, %v", text, err)
	}
	summary, err := cli(t, "show", "--home", home, "--summary", id)
	if err != nil || !strings.Contains(summary, "language") {
		t.Errorf("show --summary: %q, %v", summary, err)
	}
	graph, err := cli(t, "show", "--home", home, "--graph", id)
	if err != nil || !json.Valid([]byte(graph)) || !strings.Contains(graph, "nodes") {
		t.Errorf("show --graph: %q, %v", graph, err)
	}
	all, err := cli(t, "show", "--home", home, "--json", id)
	if err != nil || !json.Valid([]byte(all)) || !strings.Contains(all, `"segments"`) {
		t.Errorf("show --json: %v", err)
	}
}

func TestRunReportsFailuresAndExitsNonZero(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	os.WriteFile(good, []byte("Maria Schneider met the Acme Logistics team in Hamburg on 5 March 2024.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.txt"), nil, 0o644)
	out, err := cli(t, "run", "--home", home, "--json", "--progress", "none", dir)
	if exitCode(err) != 1 {
		t.Fatalf("exit code %d, want 1", exitCode(err))
	}
	results := decodeLines[docResult](t, out)
	byFile := map[string]docResult{}
	for _, r := range results {
		byFile[filepath.Base(r.File)] = r
	}
	if r := byFile["good.txt"]; r.Status != "completed" {
		t.Errorf("good.txt: %+v", r)
	}
	if r := byFile["empty.txt"]; r.Status != "failed" || !strings.Contains(r.Error, "empty") {
		t.Errorf("empty.txt: %+v", r)
	}
	out, err = cli(t, "status", "--home", home, "--failed", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, byFile["empty.txt"].WorkflowID) || !strings.Contains(out, "file is empty") {
		t.Errorf("status --failed does not list the failure:\n%s", out)
	}
	// The table's STEP column names the step that failed (its STATUS
	// already says failed).
	out, err = cli(t, "status", "--home", home, "--failed")
	if err != nil {
		t.Fatal(err)
	}
	if row := lineWith(out, byFile["empty.txt"].WorkflowID); !strings.Contains(row, " "+pipeline.StepSegmentPrep+" ") {
		t.Errorf("status --failed: the row of empty.txt does not name %s as its step:\n%s", pipeline.StepSegmentPrep, out)
	}
}

// lineWith is the first line of out that holds s, or "".
func lineWith(out, s string) string {
	for line := range strings.Lines(out) {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	if code := exitCode(run(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{})); code != 2 {
		t.Errorf("no args: exit %d", code)
	}
	if code := exitCode(run(context.Background(), []string{"frobnicate"}, &bytes.Buffer{}, &bytes.Buffer{})); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	if _, err := cli(t, "run", "--home", t.TempDir(), filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file: want an error")
	}
	home := t.TempDir()
	if _, err := cli(t, "status", "--home", home, "--limit", "-1"); err == nil {
		t.Error("negative --limit: want an error")
	}
}

// ingest registers without processing; work then finishes what is pending.
func TestIngestThenWork(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	out, err := cli(t, "ingest", "--home", home, "--json", "--no-start", filepath.Join(docs, "notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	regs := decodeLines[ingestResult](t, out)
	if len(regs) != 1 || regs[0].Status != "pending" || regs[0].WorkflowID == "" {
		t.Fatalf("ingest: %+v", regs)
	}
	out, err = cli(t, "status", "--home", home, "--json")
	if err != nil || !strings.Contains(out, regs[0].WorkflowID) {
		t.Fatalf("a registered workflow must be listed as waiting: %s, %v", out, err)
	}
	if _, err := cli(t, "work", "--home", home, "--progress", "none"); err != nil {
		t.Fatal(err)
	}
	out, err = cli(t, "status", "--home", home, "--json", regs[0].WorkflowID)
	if err != nil || !strings.Contains(out, `"status": "completed"`) {
		t.Errorf("after work: %s, %v", out, err)
	}
	// Ingesting the same content again finds the finished analysis.
	out, err = cli(t, "ingest", "--home", home, "--json", "--no-start", filepath.Join(docs, "notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	again := decodeLines[ingestResult](t, out)
	if len(again) != 1 || again[0].WorkflowID != regs[0].WorkflowID || !again[0].Existing {
		t.Errorf("re-ingest: %+v", again)
	}
}

// The per-page request counts of a run are the AWS cost goals: at most 0.1
// state transitions, 1.2 table writes and 1.2 blob PUTs per page. These are
// counts, not timings, so they are asserted. With -short the document
// has 200 pages: the run's dozen fixed requests still add only 0.06 a page.
func TestCostPerPage(t *testing.T) {
	t.Parallel()
	docPages := 400
	if testing.Short() {
		docPages = 200
	}
	pdf := filepath.Join(t.TempDir(), "gen.pdf")
	if err := pdfgen.WriteFile(pdf, pdfgen.Options{Pages: docPages, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"run", "--home", t.TempDir(), "--progress", "none", "--pdf", "go", "--cost", pdf}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var pages int
	var transitions, writes, reads, puts, gets float64
	line := stderr.String()[strings.Index(stderr.String(), "cost:"):]
	if _, err := fmt.Sscanf(line, "cost: %d segments processed; per segment: %f state transitions, %f table writes, %f table reads, %f blob PUTs, %f blob reads",
		&pages, &transitions, &writes, &reads, &puts, &gets); err != nil {
		t.Fatalf("cost line %q: %v", line, err)
	}
	t.Logf("per page: %.3f transitions, %.3f table writes, %.3f blob PUTs", transitions, writes, puts)
	if pages != docPages || transitions > 0.1 || writes > 1.2 || puts > 1.2 || transitions == 0 || writes == 0 || puts == 0 {
		t.Errorf("cost over the goals: %s", line)
	}
}
