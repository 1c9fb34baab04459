package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A document that completes with a failed segment is a partial result:
// run says how many failed and exits 1, so a script can tell it from a
// full one.
func TestRunExitsOneOnFailedSegments(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\nread -r req\ncase \"$req\" in *'\"segment\":{\"index\":2,'*) echo boom >&2; exit 3;; esac\necho '{}'\n"
	if err := os.WriteFile(filepath.Join(dir, "fail-second.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(`name: fail-second
stages:
  - name: check
    scope: segment
    needs: [segment_builder]
    run: {command: [./fail-second.sh]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(dir, "three.md")
	if err := os.WriteFile(doc, []byte("# One\n\nFirst part.\n\n# Two\n\nSecond part.\n\n# Three\n\nThird part.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cliAll("run", doc, "--pipeline", file, "--home", home, "--progress", "none")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stdout, "completed, 1 segment failed") {
		t.Errorf("the table does not say a segment failed:\n%s", stdout)
	}
	// Why, in the run's table and in the listing of analyses.
	why := "1 segment failed: segment 2, check: exit status 3: boom"
	if !strings.Contains(stdout, why) {
		t.Errorf("the table does not say why the segment failed:\n%s", stdout)
	}
	want(t, 0, []string{why}, "status", "--all", "--home", home)
	if !strings.Contains(stderr, "three.md completed, 1 segment failed; after fixing the cause: docpipe rerun") {
		t.Errorf("stderr does not say what to do:\n%s", stderr)
	}
	out, _, code := cliAll("run", doc, "--pipeline", "fail-second", "--json", "--home", home, "--progress", "none")
	r := decodeLines[docResult](t, out)[0]
	if code != 1 || r.Status != "completed" || r.FailedSegments != 1 {
		t.Errorf("--json, exit %d: %+v", code, r)
	}
	// A re-run that fails the segment again is no success either.
	want(t, 1, []string{"completed, 1 segment failed"}, "rerun", r.WorkflowID, "--home", home, "--progress", "none")
}

// A document whose every segment failed fails, and says why: the first
// segment's stage and reason, not only how many.
func TestRunSaysWhyEverySegmentFailed(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	file, doc := filepath.Join(dir, "pipeline.yaml"), filepath.Join(dir, "two.md")
	writeFile(t, file, `name: fail-all
stages:
  - name: fine
    scope: segment
    needs: [segment_builder]
    run: {command: [sh, -c, "cat >/dev/null; echo '{}'"]}
  - name: broken
    scope: segment
    needs: [segment_builder]
    run: {command: [sh, -c, "cat >/dev/null; echo nope >&2; exit 4"]}
  - name: after
    scope: segment
    needs: [broken]
    run: {command: [sh, -c, "cat >/dev/null; echo '{}'"]}
  - name: report
    scope: document
    needs: [after]
    run: {command: [sh, -c, "cat >/dev/null; echo '{}'"]}
`)
	writeFile(t, doc, "# One\n\nFirst part.\n\n# Two\n\nSecond part.\n")
	stdout, _, code := cliAll("run", doc, "--pipeline", file, "--home", home, "--progress", "none")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	why := "segments failed: all 2 segments failed: segment 1, broken: exit status 4: nope"
	if !strings.Contains(stdout, why) {
		t.Errorf("the table does not say why the segments failed:\n%s", stdout)
	}
	want(t, 0, []string{why}, "status", "--all", "--home", home)
	// Each segment stage says what it did itself: the one that failed
	// the segments failed, the one that answered them completed.
	raw, _, code := cliAll("status", "--all", "--json", "--home", home)
	var st struct {
		Analyses []struct {
			WorkflowID string `json:"workflow_id"`
			Steps      map[string]struct {
				Status string `json:"status"`
				Error  string `json:"error"`
			} `json:"steps"`
		} `json:"analyses"`
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil || code != 0 || len(st.Analyses) != 1 {
		t.Fatalf("status --json (exit %d): %v\n%s", code, err, raw)
	}
	steps := st.Analyses[0].Steps
	if s := steps["broken"]; s.Status != "failed" || !strings.Contains(s.Error, "2 failed in this stage") {
		t.Errorf("broken is %s (%q), want failed with its count", s.Status, s.Error)
	}
	if s := steps["fine"]; s.Status != "completed" || !strings.Contains(s.Error, "0 failed in this stage") {
		t.Errorf("fine, which answered every segment, is %s (%q), want completed", s.Status, s.Error)
	}
	// A stage whose every input failed upstream answered nothing: it
	// fails with the workflow, whichever step closes it, rather than
	// promise an output it does not have.
	if s := steps["after"]; s.Status != "failed" {
		t.Errorf("after, which was given no segment, is %s (%q), want failed", s.Status, s.Error)
	}
	if _, errOut, code := cliAll("show", "--home", home, "--stage", "after", st.Analyses[0].WorkflowID); code == 0 {
		t.Errorf("show --stage after succeeded for a stage that answered nothing: %s", errOut)
	}
}

func TestStatusTextNamesFailedThenSkippedSegments(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    docResult
		want string
	}{
		{docResult{Status: "completed"}, "completed"},
		{docResult{Status: "completed", FailedSegments: 2}, "completed, 2 segments failed"},
		{docResult{Status: "completed", FailedSegments: 1, SkippedSegments: 3, SkippedReasons: []string{"no OCR"}}, "completed, 1 segment failed, 3 segments skipped: no OCR"},
		{docResult{Status: "failed", FailedSegments: 4}, "failed"},
	} {
		if got := statusText(c.r); got != c.want {
			t.Errorf("statusText(%+v) = %q, want %q", c.r, got, c.want)
		}
		if ok := c.r.succeeded(); ok != (c.r.Status == "completed" && c.r.FailedSegments == 0) {
			t.Errorf("%+v succeeded: %v", c.r, ok)
		}
	}
}

// An unknown command is a usage error, also when help is asked for: cobra
// alone would print the root's help and exit 0.
func TestUnknownCommandsFailEvenWithHelp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"import", "--help"}, `unknown command "import" for "docpipe"`},
		{[]string{"import"}, `unknown command "import" for "docpipe"`},
		{[]string{"--help", "import"}, `unknown command "import" for "docpipe"`},
		{[]string{"stauts", "-h"}, `unknown command "stauts" for "docpipe"; did you mean status?`},
		{[]string{"pipeline", "frob", "--help"}, `unknown command "frob" for "docpipe pipeline"`},
		{[]string{"pipeline", "--home", t.TempDir(), "frob"}, `unknown command "frob" for "docpipe pipeline"`},
		{[]string{"project", "frob"}, `unknown command "frob" for "docpipe project"`},
	} {
		stdout, stderr, code := cliAll(c.args...)
		if code != 2 || !strings.Contains(stderr, c.msg) || stdout != "" {
			t.Errorf("docpipe %s: exit %d, want 2 and %q\nstdout:\n%s\nstderr:\n%s", strings.Join(c.args, " "), code, c.msg, stdout, stderr)
		}
	}
	if _, stderr, _ := cliAll("pipeline", "frob"); !strings.Contains(stderr, "Run 'docpipe pipeline --help'") {
		t.Errorf("the hint does not name the group:\n%s", stderr)
	}
	// Known commands keep their help.
	for _, args := range [][]string{{"--help"}, {"pipeline", "--help"}, {"pipeline", "apply", "--help"}, {"events", "--help"}, {"completion", "bash", "--help"}} {
		if out, stderr, code := cliAll(args...); code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("docpipe %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
		}
	}
}
