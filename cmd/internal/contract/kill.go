package contract

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Ways a killed run is resumed, as a user would.
const (
	// ResumeRun types the same docpipe run again: it goes on with the
	// unfinished workflows, registers the files the killed run had not
	// reached and reports the ones it finished.
	ResumeRun = "run"
	// ResumeWork runs docpipe work (every unfinished workflow in the home),
	// then the same docpipe run, which now has only to report (and to
	// register and run the files the killed run never reached).
	ResumeWork = "work"
)

// Kill says how a run is interrupted: docpipe run is started and sent
// SIGKILL After each delay in turn (a run that ends before its delay is
// not killed, and the later delays are not used), then resumed.
type Kill struct {
	After  []time.Duration
	Resume string // ResumeRun or ResumeWork
}

func (k Kill) String() string {
	ds := make([]string, len(k.After))
	for i, d := range k.After {
		ds[i] = d.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("SIGKILL after %s, resumed with docpipe %s", strings.Join(ds, ", then "), k.Resume)
}

// KillResult is what a killed case did.
type KillResult struct {
	Result
	Killed int // the kills that landed before the run ended
	Log    string
}

// RunKilled runs c in a fresh home under dir, killing docpipe run as k
// says, resumes it and checks every invariant against ExpectAfterKill.
func (r Runner) RunKilled(ctx context.Context, c *Case, dir string, k Kill) KillResult {
	var res KillResult
	s, ok := r.prepare(ctx, c, dir, &res.Result)
	if !ok {
		return res
	}
	var log strings.Builder
	for _, d := range k.After {
		killed, err := r.runKilledAfter(ctx, s.runArgs(), d)
		if err != nil {
			res.fail(InvHarness, "", "docpipe run to kill: %v", err)
			return res
		}
		if !killed {
			fmt.Fprintf(&log, "the run ended before its kill at %s\n", d)
			break
		}
		res.Killed++
		fmt.Fprintf(&log, "killed at %s\n", d)
	}
	if k.Resume == ResumeWork {
		out, code := r.docpipe(ctx, "work", "--home", s.home)
		fmt.Fprintf(&log, "docpipe work exits %d:\n%s", code, out)
		if code != 0 {
			res.fail(InvHarness, "", "docpipe work exits %d after a kill", code)
		}
	}
	out, code := r.docpipe(ctx, s.runArgs()...)
	res.Log = log.String()
	r.check(ctx, c, s, out, code, c.ExpectAfterKill, &res.Result)
	return res
}

// runKilledAfter starts docpipe with args and sends it SIGKILL after d;
// it reports whether the kill ended the run. Only docpipe is killed: the
// stage processes it started live on, as they would after a crash.
func (r Runner) runKilledAfter(ctx context.Context, args []string, d time.Duration) (bool, error) {
	cmd := exec.CommandContext(ctx, r.Docpipe, args...)
	cmd.Env = r.env()
	if err := cmd.Start(); err != nil {
		return false, err
	}
	timer := time.AfterFunc(d, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
	_ = cmd.Wait() // the exit status of a run that ended first is of no interest
	timer.Stop()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, nil
}
