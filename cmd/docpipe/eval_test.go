package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
