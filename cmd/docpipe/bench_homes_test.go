package main

import (
	"os"
	"sync"
	"testing"
)

// The benchmarks give every docpipe run a new home and keep them all
// until the test binary exits (TestMain removes them). Removing a run's
// home as soon as it ends would charge whichever run comes next for the
// removal: ext4 without a journal (the root disk of the VMs these run
// on) checks every inode freed in the last minute, one by one, each time
// it allocates one near them, and a docpipe run allocates one per blob
// and per directory (about 14,000 for 1,000 one-page files, 6,000 for a
// 3,000-page PDF). A run right after deleting one such home took 3.6 s of
// system time instead of 0.95 s: a cost of the benchmark's clean-up, not
// of docpipe.
var benchHomes struct {
	once sync.Once
	dir  string
	err  error
}

// benchHome returns a new, empty home directory that is kept until the
// test binary exits.
func benchHome(tb testing.TB) string {
	tb.Helper()
	benchHomes.once.Do(func() { benchHomes.dir, benchHomes.err = os.MkdirTemp("", "docpipe-bench-homes-*") })
	if benchHomes.err != nil {
		tb.Fatal(benchHomes.err)
	}
	home, err := os.MkdirTemp(benchHomes.dir, "home-*")
	if err != nil {
		tb.Fatal(err)
	}
	return home
}

// removeBenchHomes deletes every home benchHome made.
func removeBenchHomes() {
	if benchHomes.dir != "" {
		os.RemoveAll(benchHomes.dir)
	}
}

// TestMain removes the benchmarks' homes once everything has run.
func TestMain(m *testing.M) {
	code := m.Run()
	removeBenchHomes()
	os.Exit(code)
}
