package stagerun

import (
	"context"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/docpipe/docpipe/pipeline/childenv"

	"github.com/docpipe/docpipe/internal/childproc"
)

// Program is a local program a stage runs, and how it is started and
// stopped; Command and BatchCommand run it.
type Program struct {
	// Argv is the program and its arguments; a relative program path
	// (./redact.sh) resolves against Dir, a bare name against PATH.
	Argv []string
	// Dir is the working directory: the pipeline file's folder.
	Dir string
	// Env names the variables of docpipe's environment the program gets
	// besides the minimal set (the stage's env: in the pipeline file).
	Env []string
	// Grace is the time between SIGTERM and SIGKILL on timeout or
	// cancellation.
	Grace time.Duration
}

// process is one running program and the pipes around it.
type process struct {
	cmd                     *exec.Cmd
	stdin, stdoutR, stderrR *os.File
	io                      sync.WaitGroup // feed, the stdout reader and logStderr
	stderr                  *tailBuffer
	report                  func(Progress) // nil: stderr is all log
}

// start starts the program in its own process group, with the minimal
// environment plus the stage's own variables. The caller runs feed, a
// stdout reader and logStderr, each once.
func (pr Program) start(req Request) (*process, error) {
	cmd := exec.Command(pr.Argv[0], pr.Argv[1:]...)
	cmd.Dir = pr.Dir
	cmd.Env = childenv.Minimal(pr.Env, "DOCPIPE_STAGE="+req.Stage, "DOCPIPE_WORKFLOW_ID="+req.WorkflowID)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	childproc.Tie(cmd)

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

// wait waits for the program to exit while stopOn watches ctx, then kills
// what is left of its group and waits for the pipes to drain.
func (p *process) wait(ctx context.Context, grace time.Duration) error {
	done := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() { p.stopOn(ctx, done, grace) })
	err := p.cmd.Wait()
	close(done)
	watch.Wait()
	p.killGroup()
	p.waitIO(grace)
	return err
}

// feed writes payload to stdin and closes it. A program that exits
// without reading it is not an error here; its exit status says what
// happened.
func (p *process) feed(payload []byte) {
	defer p.io.Done()
	_, _ = p.stdin.Write(payload)
	_ = p.stdin.Close()
}

// logStderr keeps the tail of stderr, passing its progress reports on
// when the caller wants them.
func (p *process) logStderr() {
	defer p.io.Done()
	if p.report == nil {
		_, _ = io.Copy(p.stderr, p.stderrR)
	} else {
		pw := &progressWriter{log: p.stderr, report: p.report}
		_, _ = io.Copy(pw, p.stderrR)
		pw.flush()
	}
	_ = p.stderrR.Close()
}

// waitIO waits for the pipes to drain. A descendant that left the group
// (setsid) can hold them open forever; after grace they are closed under
// it, so the runner returns and what was read so far is all there is.
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
