package stagerun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// ExitTempFail is the exit code (EX_TEMPFAIL from sysexits.h) a command
// uses to say "try me again later".
const ExitTempFail = 75

// DefaultGrace is how long a command may take to exit after SIGTERM
// before its process group is killed.
const DefaultGrace = 5 * time.Second

// Command runs a stage as a local program: the request on stdin, the
// output on stdout.
type Command struct {
	// Argv is the program and its arguments; a relative program path
	// (./redact.sh) resolves against Dir, a bare name against PATH.
	Argv []string
	// Dir is the working directory: the pipeline file's folder.
	Dir string
	// Timeout bounds one run; zero means none.
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL on timeout or
	// cancellation.
	Grace time.Duration
	// MaxOutput bounds stdout in bytes.
	MaxOutput int64
}

// NewCommand returns a runner for argv run in dir, bounded by timeout.
func NewCommand(argv []string, dir string, timeout time.Duration) *Command {
	return &Command{Argv: argv, Dir: dir, Timeout: timeout, Grace: DefaultGrace, MaxOutput: DefaultMaxOutput}
}

// Run starts the command in its own process group and waits for it. On
// timeout or cancellation the whole group gets SIGTERM and, after Grace,
// SIGKILL; whatever the group still holds when the command exits is
// killed too, so no grandchild outlives its stage.
func (c *Command) Run(ctx context.Context, req Request) (Result, error) {
	if len(c.Argv) == 0 {
		return Result{}, &steperr.InvalidInputError{Reason: req.Stage + ": empty command"}
	}
	payload, err := localPayload(req)
	if err != nil {
		return Result{}, err
	}
	runCtx, cancel := withTimeout(ctx, c.Timeout)
	defer cancel()

	p, err := c.start(req)
	if err != nil {
		return Result{}, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: %v", req.Stage, err)}
	}
	go p.feed(payload)
	go p.collect(c.MaxOutput)

	done := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() { p.stopOn(runCtx, done, c.Grace) })
	waitErr := p.cmd.Wait()
	close(done)
	watch.Wait()
	p.killGroup()
	p.waitIO(c.Grace)

	switch {
	case context.Cause(runCtx) == errStageTimeout:
		return Result{}, timedOut(req.Stage, c.Timeout)
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("%s: %w", req.Stage, context.Cause(ctx))
	case p.overflow:
		return Result{}, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: output too large (over %d bytes)", req.Stage, c.MaxOutput)}
	case waitErr != nil:
		return Result{}, exitError(req.Stage, waitErr, p.stderr.String())
	}
	return parseOutput(req.Stage, req.Scope, p.stdout)
}

// process is one running command and the pipes around it.
type process struct {
	cmd                     *exec.Cmd
	stdin, stdoutR, stderrR *os.File
	io                      sync.WaitGroup
	stdout                  []byte
	overflow                bool
	stderr                  *tailBuffer
	report                  func(Progress) // nil: stderr is all log
}

func (c *Command) start(req Request) (*process, error) {
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "DOCPIPE_STAGE="+req.Stage, "DOCPIPE_WORKFLOW_ID="+req.WorkflowID)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	// Our own pipes rather than exec's copying goroutines: Wait then
	// returns when the command exits, even if a grandchild still holds a
	// pipe open, and killing the group afterwards closes it.
	var pipes [6]*os.File
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(pipes[:i])
			return nil, err
		}
		pipes[i], pipes[i+1] = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[0], pipes[3], pipes[5]
	err := cmd.Start()
	closeAll([]*os.File{pipes[0], pipes[3], pipes[5]}) // the child's ends
	if err != nil {
		closeAll([]*os.File{pipes[1], pipes[2], pipes[4]})
		return nil, err
	}
	p := &process{cmd: cmd, stdin: pipes[1], stdoutR: pipes[2], stderrR: pipes[4], stderr: newTail(reasonBytes), report: req.Progress}
	p.io.Add(3)
	return p, nil
}

// feed writes the request to stdin. A command that exits without reading
// it is not an error here; its exit status says what happened.
func (p *process) feed(payload []byte) {
	defer p.io.Done()
	_, _ = p.stdin.Write(payload)
	_ = p.stdin.Close()
}

// collect reads stdout up to limit and keeps the tail of stderr, passing
// its progress reports on when the caller wants them. A command writing
// past the limit is killed rather than drained.
func (p *process) collect(limit int64) {
	var errs sync.WaitGroup
	errs.Go(func() {
		if p.report == nil {
			_, _ = io.Copy(p.stderr, p.stderrR)
		} else {
			pw := &progressWriter{log: p.stderr, report: p.report}
			_, _ = io.Copy(pw, p.stderrR)
			pw.flush()
		}
		_ = p.stderrR.Close()
		p.io.Done()
	})
	out, _ := io.ReadAll(io.LimitReader(p.stdoutR, limit+1))
	if int64(len(out)) > limit {
		p.overflow = true
		p.killGroup()
		out = nil
		_, _ = io.Copy(io.Discard, p.stdoutR)
	}
	_ = p.stdoutR.Close()
	p.stdout = out
	errs.Wait()
	p.io.Done()
}

// waitIO waits for the pipes to drain. A descendant that left the group
// (setsid) can hold them open forever; after grace they are closed under
// it, so Run returns and what was read so far is all there is.
func (p *process) waitIO(grace time.Duration) {
	drained := make(chan struct{})
	go func() { p.io.Wait(); close(drained) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-drained:
		return
	case <-t.C:
	}
	closeAll([]*os.File{p.stdin, p.stdoutR, p.stderrR})
	<-drained
}

// stopOn ends the process group when ctx ends before the command does:
// SIGTERM first, SIGKILL after grace.
func (p *process) stopOn(ctx context.Context, done <-chan struct{}, grace time.Duration) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	p.killGroup()
}

// killGroup kills every process left in the command's group. The kernel
// does not reuse the group's id while any member lives, and once none is
// left the kill finds nothing.
func (p *process) killGroup() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// exitError classifies a failed command: EX_TEMPFAIL is transient,
// everything else (another exit code, a signal) is permanent. The reason
// ends with the tail of stderr.
func exitError(stage string, err error, stderr string) error {
	reason := fmt.Sprintf("%s: %v", stage, err)
	if stderr != "" {
		reason += ": " + stderr
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == ExitTempFail {
		return &steperr.TransientError{Reason: reason}
	}
	return &steperr.StageFailedError{Reason: reason}
}
