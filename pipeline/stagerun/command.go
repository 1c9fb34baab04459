package stagerun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
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
	Program
	// Timeout bounds one run; zero means none.
	Timeout time.Duration
	// MaxOutput bounds stdout in bytes.
	MaxOutput int64
}

// NewCommand returns a runner for argv run in dir, bounded by timeout.
func NewCommand(argv []string, dir string, timeout time.Duration) *Command {
	return &Command{Program: Program{Argv: argv, Dir: dir, Grace: DefaultGrace}, Timeout: timeout, MaxOutput: DefaultMaxOutput}
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
	go p.logStderr()
	var out []byte
	overflow := false
	go func() {
		defer p.io.Done()
		out, overflow = p.readAll(c.MaxOutput)
	}()
	waitErr := p.wait(runCtx, c.Grace)

	switch {
	case context.Cause(runCtx) == errStageTimeout:
		return Result{}, timedOut(req.Stage, c.Timeout)
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("%s: %w", req.Stage, context.Cause(ctx))
	case overflow:
		return Result{}, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: output too large (over %d bytes)", req.Stage, c.MaxOutput)}
	case waitErr != nil:
		return Result{}, exitError(req.Stage, waitErr, p.stderr.String())
	}
	return parseOutput(req.Stage, req.Scope, out)
}

// readAll reads stdout up to limit. A command writing past the limit is
// killed rather than drained, and overflow is true.
func (p *process) readAll(limit int64) (out []byte, overflow bool) {
	out, _ = io.ReadAll(io.LimitReader(p.stdoutR, limit+1))
	if int64(len(out)) > limit {
		p.killGroup()
		out, overflow = nil, true
		_, _ = io.Copy(io.Discard, p.stdoutR)
	}
	_ = p.stdoutR.Close()
	return out, overflow
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
