package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// cliAll runs docpipe in-process and returns stdout, stderr and the exit
// status.
func cliAll(args ...string) (string, string, int) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), exitCode(err)
}

func TestExitCodesAndFlagPlacement(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	out, err := cli(t, "run", filepath.Join(docs, "notes.md"), "--home", home, "--json", "--progress", "none")
	if err != nil {
		t.Fatal(err)
	}
	id := decodeLines[docResult](t, out)[0].WorkflowID
	// Flags after the argument, as README writes them.
	if text, err := cli(t, "show", id, "--text", "--home", home); err != nil || strings.TrimSpace(text) == "" {
		t.Errorf("show WORKFLOW --text: %q, %v", text, err)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"show", "--home", home}, 2},                                 // missing argument
		{[]string{"show", id, "extra", "--home", home}, 2},                    // too many
		{[]string{"status", "--home", home, "--no-such-flag"}, 2},             // unknown flag
		{[]string{"status", "--home", home, "--limit", "many"}, 2},            // bad value
		{[]string{"run", "--table", "t", filepath.Join(docs, "notes.md")}, 2}, // local only
		{[]string{"work", "--home", home, "--table", "t"}, 2},                 // local only
		{[]string{"show", "01NOSUCHWORKFLOW0000000000", "--home", home}, 1},   // failure
		{[]string{"status", "--home", home}, 0},                               // success
		{[]string{"--version"}, 0},                                            //
		{[]string{"completion", "fish"}, 0},                                   //
		{[]string{"completion", "tcsh"}, 2},
	} {
		_, stderr, code := cliAll(tc.args...)
		if code != tc.code {
			t.Errorf("docpipe %s: exit %d, want %d\n%s", strings.Join(tc.args, " "), code, tc.code, stderr)
		}
		if code == 2 && !strings.Contains(stderr, "--help") {
			t.Errorf("docpipe %s: a usage error should point at --help:\n%s", strings.Join(tc.args, " "), stderr)
		}
	}
	if out, _, _ := cliAll("run", "--table", "t", "x"); out != "" {
		t.Errorf("a refused run printed %q", out)
	}
	_, stderr, _ := cliAll("work", "--table", "t")
	if !strings.Contains(stderr, "this machine only") {
		t.Errorf("work with --table does not say why it refuses: %s", stderr)
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	out, _, code := cliAll("--version")
	if code != 0 || !strings.HasPrefix(out, "docpipe version ") || strings.TrimSpace(strings.TrimPrefix(out, "docpipe version ")) == "" {
		t.Errorf("--version: %q (exit %d)", out, code)
	}
	for _, c := range newRootCmd(&app{}).Commands() {
		out, _, code := cliAll(c.Name(), "--help")
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--home") {
			t.Errorf("%s --help lacks examples or the global flags (exit %d):\n%s", c.Name(), code, out)
		}
	}
}

func TestVersionOverride(t *testing.T) {
	old := version
	version = "v9.8.7"
	t.Cleanup(func() { version = old })
	if out, _, _ := cliAll("--version"); !strings.Contains(out, "v9.8.7") {
		t.Errorf("--version ignores the linker-set version: %q", out)
	}
}

// An image without an OCR engine completes with its segment skipped, and
// the report says so and why.
func TestRunReportsSkippedSegments(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no tesseract, no poppler
	home := t.TempDir()
	png := filepath.Join(docs, "scan.png")
	out, err := cli(t, "run", "--home", home, "--json", "--progress", "none", "--pdf", "go", png)
	if err != nil {
		t.Fatal(err)
	}
	r := decodeLines[docResult](t, out)[0]
	if r.Status != "completed" || r.SkippedSegments != 1 || len(r.SkippedReasons) != 1 || !strings.Contains(r.SkippedReasons[0], "tesseract is not installed") {
		t.Errorf("json: %+v", r)
	}
	out, err = cli(t, "run", "--home", home, "--progress", "none", png)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "completed, 1 segment skipped: tesseract is not installed") {
		t.Errorf("table does not show the skipped segment:\n%s", out)
	}
}

func TestFailureAdvice(t *testing.T) {
	t.Parallel()
	permanent := []error{
		&steperr.InvalidDocumentError{Reason: "file is empty"},
		&steperr.InvalidDocumentError{Reason: "corrupt zip"},
		&steperr.UnsupportedFormatError{Reason: "legacy .doc"},
		&steperr.TooLargeError{Reason: "over 500 MiB"},
		&steperr.PasswordProtectedError{Reason: "encrypted DOCX"},
	}
	for _, err := range permanent {
		if a := failureAdvice("h", "W", err.Error()); strings.Contains(a, "rerun") {
			t.Errorf("%v: a re-run cannot help, yet: %s", err, a)
		}
	}
	if a := failureAdvice("h", "W", (&steperr.InvalidDocumentError{Reason: "file is empty"}).Error()); !strings.Contains(a, "the file is empty") {
		t.Errorf("empty file: %s", a)
	}
	if a := failureAdvice("h", "W", (&steperr.PasswordProtectedError{Reason: "x"}).Error()); !strings.Contains(a, "qpdf --decrypt") {
		t.Errorf("password: %s", a)
	}
	helps := []string{
		(&steperr.TransientError{Reason: "throttled"}).Error(),
		(&steperr.SegmentsFailedError{Reason: "all 3 segments failed"}).Error(),
		"States.Timeout: execution timed out",
		"step ocr: tesseract exited with status 1",
	}
	for _, msg := range helps {
		if a := failureAdvice("h", "W", msg); a != "after fixing the cause: docpipe rerun --home h W" {
			t.Errorf("%q: %s", msg, a)
		}
	}
}

func TestEmptyFileGetsNoRerunHint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "empty.txt"), nil, 0o644)
	_, stderr, code := cliAll("run", dir, "--home", t.TempDir(), "--progress", "none")
	if code != 1 || !strings.Contains(stderr, "the file is empty: replace it") || strings.Contains(stderr, "docpipe rerun") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// Files in a folder that are not documents are reported, not passed over.
func TestUnprocessableFilesAreReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "good.txt"), []byte("Maria Schneider met the Acme team in Hamburg.\n"), 0o644)
	want := map[string]string{}
	if err := syscall.Mkfifo(filepath.Join(dir, "x.fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	want["x.fifo"] = "not a regular file (named pipe)"
	// A socket path must be short: bind it from inside the directory.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "x.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	want["x.sock"] = "not a regular file (socket)"
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	want["dangling"] = "broken symbolic link"
	locked := filepath.Join(dir, "locked.txt")
	os.WriteFile(locked, []byte("secret"), 0o000)
	if f, err := os.Open(locked); err == nil {
		f.Close()
		// Root reads any file whatever its mode, so this case cannot be
		// made here; the others still run.
		t.Log("running as root: a mode 000 file is readable, so permission denied is not tested")
		os.Remove(locked)
	} else {
		want["locked.txt"] = "permission denied"
	}

	stdout, stderr, code := cliAll("run", dir, "/dev/null", "--home", t.TempDir(), "--json", "--progress", "none")
	if code != 1 {
		t.Errorf("exit %d, want 1 (files were not processed)\n%s", code, stderr)
	}
	want["null"] = "not a regular file (character device)"
	got := map[string]docResult{}
	for _, r := range decodeLines[docResult](t, stdout) {
		got[filepath.Base(r.File)] = r
	}
	if got["good.txt"].Status != "completed" {
		t.Errorf("good.txt: %+v", got["good.txt"])
	}
	for name, reason := range want {
		r := got[name]
		if r.Status != statusNotProcessed || r.Error != reason {
			t.Errorf("%s: %+v, want %q", name, r, reason)
		}
		if !strings.Contains(stderr, fmt.Sprintf("skipped %s: %s", r.File, reason)) {
			t.Errorf("stderr does not list %s:\n%s", name, stderr)
		}
	}

	// ingest reports them the same way.
	stdout, _, code = cliAll("ingest", filepath.Join(dir, "x.fifo"), "--home", t.TempDir(), "--no-start")
	if code != 1 || !strings.Contains(stdout, "not processed: not a regular file (named pipe)") {
		t.Errorf("ingest: exit %d\n%s", code, stdout)
	}
}

func TestStatusShowsLocalTimesAndDurations(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	out, err := cli(t, "run", filepath.Join(docs, "notes.md"), "--home", home, "--json", "--progress", "none")
	if err != nil {
		t.Fatal(err)
	}
	id := decodeLines[docResult](t, out)[0].WorkflowID
	out, err = cli(t, "status", id, "--home", home)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^segment_prep\s+completed\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\d+(ms|\.\ds)\b`)
	m := row.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no readable times and duration:\n%s", out)
	}
	if _, err := time.ParseInLocation(localTimeLayout, m[1], time.Local); err != nil {
		t.Error(err)
	}
	// JSON keeps RFC 3339.
	out, err = cli(t, "status", id, "--home", home, "--json")
	if err != nil || !regexp.MustCompile(`"started_at": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"`).MatchString(out) {
		t.Errorf("status --json times: %v\n%s", err, out)
	}
}

func TestShortDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		350 * time.Millisecond:                       "350ms",
		1200 * time.Millisecond:                      "1.2s",
		3*time.Minute + 4*time.Second:                "3m04s",
		2*time.Hour + 5*time.Minute + 40*time.Second: "2h06m",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
	if got := took("2026-01-02T03:04:05Z", "2026-01-02T03:05:06.5Z"); got != "1m02s" {
		t.Errorf("took: %q", got)
	}
	if got := took("2026-01-02T03:04:05Z", ""); got != "" {
		t.Errorf("took of a running step: %q", got)
	}
}
