//go:build !linux

package childproc

import "os/exec"

// tie does nothing where the kernel offers no parent-death signal: there a
// killed docpipe leaves its running programs to finish on their own.
func tie(*exec.Cmd) {}
