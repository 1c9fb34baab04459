package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallDocuments is how many one-page files BenchmarkSmallDocuments runs.
const smallDocuments = 1000

// BenchmarkSmallDocuments runs `docpipe run` as a child process on a folder
// of 1,000 one-page text files, each with different content, and reports
// documents per second end to end: here the per-document costs (state
// transitions, table transactions, engine start of each execution) weigh
// more than extraction does.
func BenchmarkSmallDocuments(b *testing.B) {
	bin := docpipeBinary(b)
	dir := b.TempDir()
	if err := writeSmallDocuments(dir, smallDocuments); err != nil {
		b.Fatal(err)
	}
	// The state file and the blob store live under the home: on the
	// temporary directory's disk their syncs and file creations cost what
	// they cost users; on tmpfs (when /dev/shm is one) only docpipe's own
	// work is left.
	//
	// Every run gets a new home, and the homes are kept until the whole
	// benchmark ends. Removing a run's home before the next run starts
	// would charge that run for the removal: ext4 without a journal (the
	// root disk of the VMs this runs on) skips every inode freed in the
	// last minute, one by one, when it allocates one, and a run creates
	// about 14,000 inodes next to the 14,000 the previous run freed. That
	// doubled the run's system time (0.95 s to 3.6 s), a cost of deleting
	// the previous home, not of processing the documents.
	homes := b.TempDir()
	newDiskHome := func() string {
		home, err := os.MkdirTemp(homes, "home-*")
		if err != nil {
			b.Fatal(err)
		}
		return home
	}
	b.Run("process", func(b *testing.B) { benchSmallProcess(b, bin, dir, newDiskHome) })
	b.Run("process-tmpfs", func(b *testing.B) {
		if !isTmpfs("/dev/shm") {
			b.Skip("no tmpfs at /dev/shm")
		}
		benchSmallProcess(b, bin, dir, func() string {
			home, err := os.MkdirTemp("/dev/shm", "docpipe-bench-*")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { os.RemoveAll(home) })
			return home
		})
	})
	// The same run inside the test process, so that -cpuprofile and
	// -memprofile see it, with the runtime tuned as main tunes it.
	b.Run("in-process", func(b *testing.B) {
		defer restoreRuntime()()
		tuneGC()
		tuneProcs()
		var wall time.Duration
		for i := 0; i < b.N; i++ {
			home := newDiskHome()
			var stdout, stderr bytes.Buffer
			start := time.Now()
			if err := run(context.Background(), []string{"run", "--home", home, "--progress", "none", dir}, &stdout, &stderr); err != nil {
				b.Fatalf("%v\n%s", err, stderr.String())
			}
			wall += time.Since(start)
		}
		secs := wall.Seconds() / float64(b.N)
		b.ReportMetric(secs, "wall-s")
		b.ReportMetric(smallDocuments/secs, "docs/s")
	})
}

// benchSmallProcess runs `docpipe run` on dir b.N times, each time with a
// new home from newHome, and reports documents per second.
func benchSmallProcess(b *testing.B, bin, dir string, newHome func() string) {
	secs, rss := timeRuns(b, bin, newHome, dir)
	b.ReportMetric(secs, "wall-s")
	b.ReportMetric(smallDocuments/secs, "docs/s")
	b.ReportMetric(rss, "peak-RSS-MB")
}

// timeRuns runs `docpipe run --home HOME --progress none args...` b.N
// times, each with a new home from newHome, and returns the mean wall
// seconds of a run and the largest peak RSS in MB.
func timeRuns(b *testing.B, bin string, newHome func() string, args ...string) (secs, peakRSSMB float64) {
	var wall time.Duration
	var rss int64
	for i := 0; i < b.N; i++ {
		home := newHome()
		start := time.Now()
		cmd := exec.Command(bin, append([]string{"run", "--home", home, "--progress", "none"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		wall += time.Since(start)
		rss = max(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	}
	return wall.Seconds() / float64(b.N), float64(rss) / 1024
}

// isTmpfs reports whether dir is the mount point of a tmpfs.
func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}

// writeSmallDocuments writes n distinct one-page plain-text letters to dir.
func writeSmallDocuments(dir string, n int) error {
	const para = "The committee met on Tuesday in Hamburg to review the quarterly report of Northwind Traders. " +
		"Revenue grew in every region, while shipping costs from Rotterdam rose sharply after the new tariffs. " +
		"Maria Keller proposed moving the archive to the Berlin office before the end of the year.\n\n"
	for i := range n {
		var sb strings.Builder
		fmt.Fprintf(&sb, "Letter %d\n\nDear reader number %d,\n\n", i, i)
		for range 6 {
			sb.WriteString(para)
		}
		fmt.Fprintf(&sb, "Reference %08d. Kind regards,\nThe secretariat\n", i*7919)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("letter-%04d.txt", i)), []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// restoreRuntime records the collector's and the scheduler's settings and
// returns a func that puts them back.
func restoreRuntime() func() {
	gcPercent := debug.SetGCPercent(100)
	debug.SetGCPercent(gcPercent)
	memLimit := debug.SetMemoryLimit(-1) // a negative limit only reads it
	procs := runtime.GOMAXPROCS(0)
	return func() {
		debug.SetGCPercent(gcPercent)
		debug.SetMemoryLimit(memLimit)
		runtime.GOMAXPROCS(procs)
	}
}
