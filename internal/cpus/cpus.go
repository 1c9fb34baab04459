// Package cpus says how many processors docpipe may use, for the defaults
// that size work to the machine: documents at once, pdftotext processes,
// segments analysed at once. It is GOMAXPROCS as the process started —
// the Go runtime's own count, which follows CPU affinity and cgroup
// quotas — taken before a command raises GOMAXPROCS (docpipe does, so that
// a goroutine woken to commit a transaction does not wait behind another
// one's CPU work: see its main).
package cpus

import "runtime"

// usable is read while packages are initialised, before main can change
// GOMAXPROCS.
var usable = runtime.GOMAXPROCS(0)

// Usable returns the number of processors the process may use.
func Usable() int { return usable }
