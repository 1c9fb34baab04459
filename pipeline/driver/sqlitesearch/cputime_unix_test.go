//go:build unix

package sqlitesearch

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, in user and kernel
// mode: on a loaded machine, what a benchmark costs shows better in it
// than in wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
