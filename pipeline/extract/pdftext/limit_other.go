//go:build !linux

package pdftext

import (
	"context"
	"os/exec"
	"strconv"
)

// limitedCommand runs the tool under a memory limit of limit bytes (<=0:
// none) through a shell that sets ulimit -v and then execs it: works on
// any Unix without util-linux's prlimit or cgo.
func limitedCommand(ctx context.Context, limit int64, tool string, args ...string) *exec.Cmd {
	if limit <= 0 {
		return exec.CommandContext(ctx, tool, args...)
	}
	argv := append([]string{"-c", `ulimit -v "$0" && exec "$@"`, strconv.FormatInt(limit>>10, 10), tool}, args...)
	return exec.CommandContext(ctx, "sh", argv...)
}

// startLimited starts cmd, limited by limitedCommand already.
func startLimited(cmd *exec.Cmd, _ int64) error { return cmd.Start() }
