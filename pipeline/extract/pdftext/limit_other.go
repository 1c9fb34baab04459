//go:build !linux

package pdftext

import (
	"context"
	"os/exec"
	"strconv"

	"github.com/docpipe/docpipe/internal/childproc"
	"github.com/docpipe/docpipe/pipeline/childenv"
)

// limitedCommand runs the tool under a memory limit of limit bytes (<=0:
// none) through a shell that sets ulimit -v and then execs it: works on
// any Unix without util-linux's prlimit or cgo.
func limitedCommand(ctx context.Context, limit int64, tool string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, tool, args...)
	if limit > 0 {
		argv := append([]string{"-c", `ulimit -v "$0" && exec "$@"`, strconv.FormatInt(limit>>10, 10), tool}, args...)
		cmd = exec.CommandContext(ctx, "sh", argv...)
	}
	childproc.Tie(cmd)
	cmd.Env = childenv.Minimal(nil) // none of docpipe's credentials
	return cmd
}

// startLimited starts cmd, limited by limitedCommand already.
func startLimited(cmd *exec.Cmd, _ int64) error { return cmd.Start() }
