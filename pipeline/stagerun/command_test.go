package stagerun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// upperArg makes the test binary act as a stage program (see TestMain),
// so the contract is exercised by a real process reading a real request.
const upperArg = "stagerun-test-upper-stage"

// envArg makes the test binary a stage that answers {"env": [its environment]}.
const envArg = "stagerun-test-env-stage"

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == upperArg {
		os.Exit(upperStage())
	}
	if len(os.Args) >= 2 && os.Args[1] == batchArg {
		os.Exit(batchStage(len(os.Args) == 3 && os.Args[2] == "reverse"))
	}
	if len(os.Args) == 2 && os.Args[1] == envArg {
		_ = json.NewEncoder(os.Stdout).Encode(map[string][]string{"env": os.Environ()})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// upperStage is a segment stage that upper-cases the segment text it reads
// from the file named in the request.
func upperStage() int {
	var req Request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "decode:", err)
		return 2
	}
	text, err := os.ReadFile(req.Inputs.SegmentText)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cwd, _ := os.Getwd()
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{
		"text":        strings.ToUpper(string(text)),
		"stage":       os.Getenv("DOCPIPE_STAGE"),
		"workflow_id": os.Getenv("DOCPIPE_WORKFLOW_ID"),
		"dir":         cwd,
		"prompt":      req.Settings["document_prompt"],
	})
	return 0
}

func shell(script string) []string { return []string{"sh", "-c", script} }

func TestCommandUppercasesASegment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	req := segmentRequest(t, "hello world")
	res, err := NewCommand([]string{os.Args[0], upperArg}, dir, time.Minute).Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text == nil || *res.Text != "HELLO WORLD" {
		t.Errorf("Text = %v, want HELLO WORLD", res.Text)
	}
	var out map[string]string
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"stage": "shout", "workflow_id": "wf-1", "dir": dir, "prompt": "be loud"}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("%s = %q, want %q", k, out[k], v)
		}
	}
}

// Not parallel: it sets the test process's environment.
func TestCommandGetsAMinimalEnvironment(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("DOCPIPE_TOKEN", "dashboard-token")
	t.Setenv("DOCPIPE_WEBHOOK_SECRET", "whsec_c2VjcmV0")
	t.Setenv("DOCPIPE_STAGE", "not-this-one")
	t.Setenv("STAGE_API_KEY", "named-in-env")
	t.Setenv("HOME", "/home/stage-test")
	c := NewCommand([]string{os.Args[0], envArg}, t.TempDir(), time.Minute)
	c.Env = []string{"STAGE_API_KEY"}
	res, err := c.Run(t.Context(), segmentRequest(t, "x"))
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Env []string }
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	for _, kv := range []string{"STAGE_API_KEY=named-in-env", "HOME=/home/stage-test", "DOCPIPE_STAGE=shout", "DOCPIPE_WORKFLOW_ID=wf-1"} {
		if !slices.Contains(out.Env, kv) {
			t.Errorf("the stage's environment lacks %s: %q", kv, out.Env)
		}
	}
	for _, kv := range out.Env {
		if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "DOCPIPE_TOKEN=") || strings.HasPrefix(kv, "DOCPIPE_WEBHOOK_SECRET=") || kv == "DOCPIPE_STAGE=not-this-one" {
			t.Errorf("the stage sees %s", kv)
		}
	}
}

func TestCommandResolvesRelativeProgramsInItsFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "stage.sh"), "#!/bin/sh\necho '{\"ok\": true}'\n")
	res, err := NewCommand([]string{"./stage.sh"}, dir, time.Minute).Run(t.Context(), segmentRequest(t, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != `{"ok": true}` {
		t.Errorf("Output = %s", res.Output)
	}
}

func TestCommandFailures(t *testing.T) {
	t.Parallel()
	manyLines := `i=0; while [ $i -lt 500 ]; do echo "log line $i" >&2; i=$((i+1)); done; `
	for _, tc := range []struct {
		name   string
		argv   []string
		want   string
		reason []string
	}{
		{"tempfail is transient", shell("echo busy >&2; exit 75"), steperr.NameTransient, []string{"shout: exit status 75: busy"}},
		{"exit 3 is permanent", shell(manyLines + "echo 'ValueError: bad input' >&2; exit 3"), steperr.NameStageFailed,
			[]string{"shout: exit status 3: ", "log line 499\nValueError: bad input"}},
		{"killed by a signal", shell("kill -SEGV $$"), steperr.NameStageFailed, []string{"shout: signal: segmentation fault"}},
		{"output not JSON", shell("echo hello"), steperr.NameStageFailed, []string{"shout: stage output is not JSON"}},
		{"no output", shell("exit 0"), steperr.NameStageFailed, []string{"stage output is not JSON"}},
		{"missing program", []string{"./no-such-stage"}, steperr.NameStageFailed, []string{"shout: ", "no-such-stage"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewCommand(tc.argv, t.TempDir(), time.Minute).Run(t.Context(), segmentRequest(t, "x"))
			wantErr(t, err, tc.want, tc.reason...)
			if len(err.Error()) > reasonBytes+100 {
				t.Errorf("reason is %d bytes, want the stderr tail only", len(err.Error()))
			}
		})
	}
}

func TestCommandEmptyArgv(t *testing.T) {
	t.Parallel()
	_, err := NewCommand(nil, "", time.Minute).Run(t.Context(), segmentRequest(t, "x"))
	wantErr(t, err, steperr.NameInvalidInput, "empty command")
}

// startsSleeper is a command that leaves a grandchild (a background sleep
// that keeps stdout open) and records its pid in a file.
// startsSleeper starts a grandchild sleeper whose pid appears in pidFile
// whole (written aside, then renamed), so a watcher never reads it empty.
func startsSleeper(pidFile, then string) []string {
	return shell(fmt.Sprintf("sleep 1000 & echo $! > %[1]s.tmp && mv %[1]s.tmp %[1]s; %[2]s", pidFile, then))
}

func TestCommandTimeoutKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	for name, then := range map[string]string{
		"exits on SIGTERM":  "sleep 1000",
		"ignores SIGTERM":   "trap '' TERM; while :; do sleep 1; done",
		"exits 0 when told": "trap 'echo {}; exit 0' TERM; sleep 1000 & wait",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			c := NewCommand(startsSleeper(pidFile, then), "", 300*time.Millisecond)
			c.Grace = 200 * time.Millisecond
			_, err := c.Run(t.Context(), segmentRequest(t, "x"))
			wantErr(t, err, steperr.NameTransient, "shout: timed out after 0.3s")
			waitGone(t, readPid(t, pidFile))
		})
	}
}

func TestCommandLeftoversAreKilledAfterExit(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	res, err := NewCommand(startsSleeper(pidFile, "echo '{}'"), "", time.Minute).Run(t.Context(), segmentRequest(t, "x"))
	if err != nil || string(res.Output) != "{}" {
		t.Fatalf("Run = %s, %v", res.Output, err)
	}
	waitGone(t, readPid(t, pidFile))
}

func TestCommandReturnsWhenADescendantEscapesTheGroup(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := NewCommand(shell(fmt.Sprintf("setsid sleep 1000 & echo $! > %s; echo '{}'", pidFile)), "", time.Minute)
	c.Grace = 100 * time.Millisecond
	res, err := c.Run(t.Context(), segmentRequest(t, "x"))
	_ = syscall.Kill(readPid(t, pidFile), syscall.SIGKILL)
	if err != nil || string(res.Output) != "{}" {
		t.Fatalf("Run = %s, %v", res.Output, err)
	}
}

func TestCommandCancelKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(t.Context())
	go cancelOncePidWritten(pidFile, cancel)
	_, err := NewCommand(startsSleeper(pidFile, "sleep 1000"), "", time.Minute).Run(ctx, segmentRequest(t, "x"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if name := steperr.Name(err); name == steperr.NameTransient || name == steperr.NameStageFailed {
		t.Errorf("cancellation was classified as %s", name)
	}
	waitGone(t, readPid(t, pidFile))
}

func TestCommandOutputTooLarge(t *testing.T) {
	t.Parallel()
	c := NewCommand([]string{"yes"}, "", time.Minute) // never stops on its own
	c.MaxOutput = 1 << 20
	_, err := c.Run(t.Context(), segmentRequest(t, "x"))
	wantErr(t, err, steperr.NameStageFailed, "shout: output too large (over 1048576 bytes)")
}

func TestCommandIgnoringStdin(t *testing.T) {
	t.Parallel()
	req := segmentRequest(t, strings.Repeat("a", 1<<20)) // more than a pipe holds
	res, err := NewCommand(shell(`echo '{"read": false}'`), "", time.Minute).Run(t.Context(), req)
	if err != nil || string(res.Output) != `{"read": false}` {
		t.Fatalf("Run = %s, %v", res.Output, err)
	}
}

func TestPythonStage(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the shell and Go stages cover the same contract")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "redact.py"), `import json, re, sys
req = json.load(sys.stdin)
text = open(req["inputs"]["segment_text"]).read()
if "fail" in text:
    raise ValueError("bad input")
json.dump({"text": re.sub(r"[0-9]", "#", text), "needs": sorted(req["inputs"]["needs"])}, sys.stdout)
`)
	c := NewCommand([]string{"python3", "redact.py"}, dir, time.Minute)
	res, err := c.Run(t.Context(), segmentRequest(t, "call 555 0100"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text == nil || *res.Text != "call ### ####" {
		t.Errorf("Text = %v", res.Text)
	}
	_, err = c.Run(t.Context(), segmentRequest(t, "fail"))
	wantErr(t, err, steperr.NameStageFailed, "shout: exit status 1: ", "Traceback", "ValueError: bad input")
}

// cancelOncePidWritten cancels once path holds a whole line: the shell
// creates the file before it writes the pid.
func cancelOncePidWritten(path string, cancel context.CancelFunc) {
	for {
		if raw, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(raw), "\n") {
			cancel()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitGone waits for pid to be dead: gone, or a zombie nobody has reaped
// yet (inside a container, pid 1 may never reap).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if !alive(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived its stage", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func BenchmarkCommand(b *testing.B) {
	c := NewCommand([]string{"cat"}, "", time.Minute)
	req := Request{WorkflowID: "wf", Stage: "echo", Scope: ScopeDocument}
	for b.Loop() {
		if _, err := c.Run(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
}
