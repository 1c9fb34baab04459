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

	"github.com/docpipe/docpipe/internal/testbin"
)

// smallDocuments is how many one-page files BenchmarkSmallDocuments runs.
const smallDocuments = 1000

// BenchmarkSmallDocuments runs `docpipe run` as a child process on a folder
// of 1,000 one-page text files, each with different content, and reports
// documents per second end to end: here the per-document costs (state
// transitions, table transactions, engine start of each execution) weigh
// more than extraction does.
func BenchmarkSmallDocuments(b *testing.B) {
	bin := testbin.Docpipe(b)
	dir := b.TempDir()
	if err := writeSmallDocuments(dir, smallDocuments); err != nil {
		b.Fatal(err)
	}
	// The state file and the blob store live under the home: on the
	// temporary directory's disk their syncs and file creations cost what
	// they cost users; on tmpfs (when /dev/shm is one) only docpipe's own
	// work is left. Each run on disk gets a new home, kept until the test
	// binary exits (see benchHome).
	newDiskHome := func() string { return benchHome(b) }
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

// smallPDFs is how many one-page PDFs BenchmarkSmallPDFs runs: groff
// takes about 0.1 s to make each, so fewer than the text files.
const smallPDFs = 200

// BenchmarkSmallPDFs runs `docpipe run` on a folder of one-page PDFs made
// by groff, with each PDF backend, and reports documents per second: with
// poppler a document's cost is mostly its pdftotext process.
func BenchmarkSmallPDFs(b *testing.B) {
	bin := testbin.Docpipe(b)
	dir := groffLetters(b, smallPDFs)
	for _, backend := range []string{"poppler", "go"} {
		b.Run("pdf="+backend, func(b *testing.B) {
			if backend == "poppler" {
				if _, err := exec.LookPath("pdftotext"); err != nil {
					b.Skip("pdftotext is not installed")
				}
			}
			secs, rss := timeRuns(b, bin, func() string { return benchHome(b) }, "--pdf", backend, dir)
			b.ReportMetric(secs, "wall-s")
			b.ReportMetric(smallPDFs/secs, "docs/s")
			b.ReportMetric(rss, "peak-RSS-MB")
		})
	}
}

// groffLetters returns a folder of n one-page groff letters, each with
// different content, made once and kept under the user cache directory
// (making them takes longer than the benchmark). Without groff the
// benchmark skips.
func groffLetters(b *testing.B, n int) string {
	b.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "docpipe-bench", fmt.Sprintf("groff-letters-%d", n))
	if entries, err := os.ReadDir(dir); err == nil && len(entries) == n {
		return dir
	}
	if _, err := exec.LookPath("groff"); err != nil {
		b.Skip("groff is not installed")
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		cmd := exec.Command("groff", "-ms", "-Tpdf")
		cmd.Stdin = strings.NewReader(fmt.Sprintf(".TL\nLetter %d\n.PP\nDear reader number %d,\n.PP\n%s.PP\nReference %08d. Kind regards, the secretariat.\n",
			i, i, strings.Repeat(letterParagraph+"\n.PP\n", 6), i*7919))
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("groff: %v", err)
		}
		if err := os.WriteFile(filepath.Join(tmp, fmt.Sprintf("letter-%04d.pdf", i)), out, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	return dir
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
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		peak, err := runPeakRSS(cmd)
		if err != nil {
			b.Fatalf("%v\n%s", err, out.Bytes())
		}
		wall += time.Since(start)
		rss = max(rss, peak)
	}
	return wall.Seconds() / float64(b.N), float64(rss) / 1024
}

// runPeakRSS runs cmd and returns its peak resident set in KiB.
//
// The rusage of a child (ProcessState.SysUsage) cannot tell it on Linux:
// Go starts children with vfork, and the kernel carries the parent's
// high-water mark into the child's when the child execs, so after one
// benchmark grew the test binary to 300 MB every child reported 300 MB.
// VmHWM in /proc/<pid>/status is the child's own; it is read every few
// milliseconds while the child runs, so only a rise in its last
// milliseconds could be missed. Without /proc the rusage is all there is.
func runPeakRSS(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	done, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if kib, ok := vmHWM(status); ok {
				peak = max(peak, kib)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	<-polled
	if peak == 0 { // no /proc
		peak = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	}
	return peak, err
}

// vmHWM reads the VmHWM line (KiB) of a /proc/<pid>/status file.
func vmHWM(status string) (int64, bool) {
	raw, err := os.ReadFile(status)
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			_, err := fmt.Sscan(rest, &kib)
			return kib, err == nil
		}
	}
	return 0, false
}

// isTmpfs reports whether dir is the mount point of a tmpfs.
func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}

// letterParagraph is the prose of the small documents.
const letterParagraph = "The committee met on Tuesday in Hamburg to review the quarterly report of Northwind Traders. " +
	"Revenue grew in every region, while shipping costs from Rotterdam rose sharply after the new tariffs. " +
	"Maria Keller proposed moving the archive to the Berlin office before the end of the year."

// writeSmallDocuments writes n distinct one-page plain-text letters to dir.
func writeSmallDocuments(dir string, n int) error {
	const para = letterParagraph + "\n\n"
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
