package childproc

import (
	"os/exec"
	"syscall"
)

// tie asks the kernel to SIGKILL the child when the thread that started it
// exits. Go does not end a thread unless a goroutine locked to it returns
// still locked, which docpipe never does around starting a program.
func tie(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
