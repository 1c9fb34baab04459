package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/eval"
)

var (
	truthDir      = filepath.Join("..", "..", "samples", "truth")
	factsPipeline = filepath.Join("..", "..", "samples", "pipelines", "facts")
)

func evalJSON(t *testing.T, args ...string) evalReport {
	t.Helper()
	out, err := cli(t, append([]string{"eval", "--json"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rep
}

func fieldMean(v evalVersion, path string) float64 { return v.Summary.Fields[path] }

// The naive facts version answers the wrong total and no currency: eval
// must score it below the good one, say where, and run each version in
// its own project; a second eval reuses every analysis.
func TestEvalScoresWorseVersionLower(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, file := range []string{"pipeline.yaml", "naive.yaml"} {
		if _, err := cli(t, "pipeline", "apply", "--home", home, filepath.Join(factsPipeline, file)); err != nil {
			t.Fatal(err)
		}
	}
	rep := evalJSON(t, "--home", home, "--truth", truthDir, "--pipeline", "facts@1", "--against", "facts@2")
	if len(rep.Versions) != 2 {
		t.Fatalf("%d versions, want 2", len(rep.Versions))
	}
	good, naive := rep.Versions[0], rep.Versions[1]
	if good.Pipeline != "facts@1" || naive.Pipeline != "facts@2" || good.Project != "eval-facts-1" || naive.Project != "eval-facts-2" {
		t.Errorf("versions %s in %s, %s in %s", good.Pipeline, good.Project, naive.Pipeline, naive.Project)
	}
	if good.Summary.Score <= naive.Summary.Score {
		t.Errorf("facts@1 scored %.3f, not above the naive facts@2's %.3f", good.Summary.Score, naive.Summary.Score)
	}
	if fieldMean(good, "facts.currency") != 1 || fieldMean(naive, "facts.currency") != 0 {
		t.Errorf("facts.currency: %v and %v, want 1 and 0", fieldMean(good, "facts.currency"), fieldMean(naive, "facts.currency"))
	}
	if fieldMean(good, "facts.total") <= fieldMean(naive, "facts.total") {
		t.Errorf("facts.total: %v, not above %v", fieldMean(good, "facts.total"), fieldMean(naive, "facts.total"))
	}
	// What both versions share scores the same.
	if fieldMean(good, "language") != fieldMean(naive, "language") || fieldMean(good, "language") == 0 {
		t.Errorf("language: %v and %v", fieldMean(good, "language"), fieldMean(naive, "language"))
	}
	if len(rep.Differences) == 0 || rep.Differences[0].Delta >= 0 || !strings.Contains(strings.Join(rep.Differences[0].Fields, ","), "facts.") {
		t.Errorf("differences %+v", rep.Differences)
	}
	truths, _ := os.ReadDir(truthDir)
	workflows := map[string]bool{}
	for _, v := range rep.Versions {
		if len(v.Documents) != len(truths) {
			t.Errorf("%s: %d documents, want %d", v.Pipeline, len(v.Documents), len(truths))
		}
		for _, d := range v.Documents {
			if d.Status != "completed" || d.Reused || d.Cost.Transitions == 0 || d.Seconds <= 0 {
				t.Errorf("%s %s: %+v", v.Pipeline, d.File, d)
			}
			if workflows[d.WorkflowID] {
				t.Errorf("%s: workflow %s shared between versions", d.File, d.WorkflowID)
			}
			workflows[d.WorkflowID] = true
		}
	}

	again := evalJSON(t, "--home", home, "--truth", truthDir, "--pipeline", "facts@1", "--against", "facts@2")
	for i, v := range again.Versions {
		if v.Summary.Score != rep.Versions[i].Summary.Score {
			t.Errorf("%s: %v the second time, %v the first", v.Pipeline, v.Summary.Score, rep.Versions[i].Summary.Score)
		}
		for j, d := range v.Documents {
			if !d.Reused || d.WorkflowID != rep.Versions[i].Documents[j].WorkflowID || d.Seconds != rep.Versions[i].Documents[j].Seconds {
				t.Errorf("%s %s: not the earlier analysis: %+v", v.Pipeline, d.File, d)
			}
		}
	}

	// A version without the facts stage is told what it lacks.
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"eval", "--home", home, "--truth", truthDir, "--pipeline", "docpipe"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "facts.total: no output of a stage facts") {
		t.Errorf("the built-in pipeline's report does not say it has no facts:\n%s", stdout.String())
	}

	// --min-score gates the --pipeline version only.
	err := run(context.Background(), []string{"eval", "--home", home, "--truth", truthDir, "--pipeline", "facts@2", "--against", "facts@1", "--min-score", "0.8"}, &stdout, &stderr)
	if exitCode(err) != 1 || !strings.Contains(stderr.String(), "facts@2 scored") {
		t.Errorf("naive version under --min-score 0.8: exit %d, stderr %s", exitCode(err), stderr.String())
	}
	if _, err := cli(t, "eval", "--home", home, "--truth", truthDir, "--pipeline", "facts@1", "--min-score", "0.8"); err != nil {
		t.Errorf("facts@1 under --min-score 0.8: %v", err)
	}
}

// A segment stage's field is a list of its segments' values.
func TestEvalSegmentStageField(t *testing.T) {
	home := t.TempDir()
	if _, err := cli(t, "pipeline", "apply", "--home", home, filepath.Join("..", "..", "samples", "pipelines", "redact", "pipeline.yaml")); err != nil {
		t.Fatal(err)
	}
	truth := t.TempDir()
	writeFile(t, filepath.Join(truth, "letter.json"), `{"document": "letter.txt",
	  "fields": {"redact.redacted.email": {"expect": [1], "items": "numeric"},
	             "redact.redacted.iban": {"expect": [2], "items": "numeric"}}}`)
	rep := evalJSON(t, "--home", home, "--truth", truth, "--docs", docs, "--pipeline", "redact@1")
	fields := rep.Versions[0].Documents[0].Score.Fields
	got, _ := json.Marshal(fields[1].Got)
	if len(fields) != 2 || fields[0].Path != "redact.redacted.email" || fields[0].Score != 1 || fields[1].Score != 0 || string(got) != "[1]" {
		t.Errorf("fields %+v: the letter has one e-mail address and one IBAN, not two", fields)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A truth file eval cannot use stops it with exit 2 before anything runs,
// naming the file and the field.
func TestEvalBadTruthExits2(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ body, says string }{
		"comparator": {`{"document": "letter.txt", "fields": {"facts.total": {"expect": 1, "compare": "close"}}}`, `bad.json: fields.facts.total: compare "close" is not one of`},
		"document":   {`{"document": "nowhere.txt", "fields": {"language": {"expect": "en"}}}`, "bad.json: document: "},
		"json":       {`{"document": `, "bad.json: not a JSON object"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home, truth := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(truth, "bad.json"), c.body)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"eval", "--home", home, "--truth", truth, "--docs", docs, "--pipeline", "docpipe"}, &stdout, &stderr)
			if exitCode(err) != 2 || !strings.Contains(stderr.String(), c.says) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", exitCode(err), stderr.String(), c.says)
			}
			if _, err := os.Stat(filepath.Join(home, "state.db")); err == nil {
				t.Error("eval wrote state before checking the truth")
			}
		})
	}
}

// evalRuns reads the evaluation runs kept for a pipeline, newest first.
func evalRuns(t *testing.T, home, name string) []pipeline.EvalRun {
	t.Helper()
	b, err := backend.OpenLocal(home)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	runs, _, err := b.Repo.ListEvalRuns(context.Background(), name, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// Each version an eval scores is kept as an evaluation run with the
// scores and cost it printed, named by the run id in --json; a bad truth
// folder keeps nothing.
func TestEvalKeepsRuns(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, file := range []string{"pipeline.yaml", "naive.yaml"} {
		if _, err := cli(t, "pipeline", "apply", "--home", home, filepath.Join(factsPipeline, file)); err != nil {
			t.Fatal(err)
		}
	}
	rep := evalJSON(t, "--home", home, "--truth", truthDir, "--pipeline", "facts@1", "--against", "facts@2")
	runs := evalRuns(t, home, "facts")
	if len(runs) != 2 {
		t.Fatalf("%d runs kept, want one per version: %+v", len(runs), runs)
	}
	wantTruth, err := truthSet(truthDir, mustLoadTruths(t, truthDir))
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: the --against version was recorded last.
	for i, run := range []pipeline.EvalRun{runs[1], runs[0]} {
		v := rep.Versions[i]
		if run.ID == "" || run.ID != v.RunID || run.String() != v.Pipeline || run.Project != v.Project {
			t.Errorf("run %s (%s) kept for %s, reported as %q", run.ID, run, v.Pipeline, v.RunID)
		}
		if run.Truth != wantTruth || run.Truth.Name != "truth" || len(run.Truth.Hash) != 64 {
			t.Errorf("%s: truth set %+v, want %+v", run, run.Truth, wantTruth)
		}
		if run.Score != v.Summary.Score || run.Documents != len(v.Documents) || len(run.Fields) != len(v.Summary.Fields) {
			t.Errorf("%s: kept score %v over %d documents and %d fields, reported %v over %d and %d",
				run, run.Score, run.Documents, len(run.Fields), v.Summary.Score, len(v.Documents), len(v.Summary.Fields))
		}
		for _, f := range run.Fields {
			if f.Score != v.Summary.Fields[f.Path] {
				t.Errorf("%s %s: kept %v, reported %v", run, f.Path, f.Score, v.Summary.Fields[f.Path])
			}
		}
		if run.Cost.Transitions != v.Cost.Transitions || run.Cost.Transitions == 0 || run.MeanSeconds <= 0 || run.At.IsZero() {
			t.Errorf("%s: cost %+v, mean %v s at %v; reported %+v", run, run.Cost, run.MeanSeconds, run.At, v.Cost)
		}
	}

	var stdout, stderr bytes.Buffer
	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, "bad.json"), `{"document": `)
	if err := run(context.Background(), []string{"eval", "--home", home, "--truth", bad, "--pipeline", "facts@1"}, &stdout, &stderr); exitCode(err) != 2 {
		t.Fatalf("bad truth: exit %d, %s", exitCode(err), stderr.String())
	}
	if got := evalRuns(t, home, "facts"); len(got) != 2 {
		t.Errorf("a bad truth folder kept a run: %d runs", len(got))
	}
}

func mustLoadTruths(t *testing.T, dir string) []eval.Truth {
	t.Helper()
	truths, err := eval.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return truths
}

// The truth set's hash follows the files' contents, whatever folder holds
// them; the folder's name is kept beside it.
func TestEvalTruthSetHash(t *testing.T) {
	t.Parallel()
	body := `{"document": "letter.txt", "fields": {"language": {"expect": "en"}}}`
	set := func(dir, body string) pipeline.TruthSet {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "letter.json"), body)
		ts, err := truthSet(dir, mustLoadTruths(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	root := t.TempDir()
	a := set(filepath.Join(root, "a", "truth"), body)
	b := set(filepath.Join(root, "b", "truth"), body)
	edited := set(filepath.Join(root, "c", "truth"), strings.Replace(body, `"en"`, `"de"`, 1))
	if a != b || a.Name != "truth" {
		t.Errorf("the same files in two folders named truth: %+v and %+v", a, b)
	}
	if edited.Hash == a.Hash {
		t.Error("an edited truth file hashes as before")
	}
}
