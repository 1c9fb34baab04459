//go:build linux

package pdftext

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"golang.org/x/sys/unix"

	"github.com/docpipe/docpipe/internal/childproc"
	"github.com/docpipe/docpipe/pipeline/childenv"
)

// limitedCommand runs the tool itself, with no shell in between: the
// memory limit is set on the started process (startLimited).
func limitedCommand(ctx context.Context, _ int64, tool string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, tool, args...)
	childproc.Tie(cmd)
	cmd.Env = childenv.Minimal(nil) // none of docpipe's credentials
	return cmd
}

// startLimited starts cmd and caps its address space at limit bytes (<=0:
// no cap), as ulimit -v does. Start returns once the tool has been exec'd,
// so the cap lands while its dynamic loader is still mapping poppler's
// shared libraries, before the tool reads its input; a shell to run ulimit
// first would cost as much again as the loader's work on a small file.
func startLimited(cmd *exec.Cmd, limit int64) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	if limit <= 0 {
		return nil
	}
	rl := unix.Rlimit{Cur: uint64(limit), Max: uint64(limit)}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_AS, &rl, nil); err != nil && !errors.Is(err, unix.ESRCH) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("limiting the memory of %s: %w", cmd.Path, err)
	}
	return nil
}
