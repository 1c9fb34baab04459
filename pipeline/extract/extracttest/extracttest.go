// Package extracttest holds what the extractors' tests and benchmarks
// share: large generated inputs and a probe of the heap's peak.
package extracttest

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Sentence is the text large inputs repeat, numbered with %d so that no
// two are alike.
const Sentence = "The confidential workflow of office number %d is efficient and affluent; the staff file reports. "

// WriteRepeated writes head, then piece(i) for i = 0, 1, ... until the
// file holds about size bytes, then tail.
func WriteRepeated(path string, size int, head, tail string, piece func(w io.Writer, i int)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	cw := &CountingWriter{W: w}
	io.WriteString(cw, head)
	for i := 0; cw.N < size-len(tail); i++ {
		piece(cw, i)
	}
	io.WriteString(cw, tail)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CountingWriter counts the bytes written through it to W.
type CountingWriter struct {
	W io.Writer
	N int
}

func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += n
	return n, err
}

// HeapProbe records how far the heap of live objects rises above where it
// was when the probe started: every millisecond, and whenever Sample is
// called (from inside the work, to catch a peak between two ticks). It
// reads runtime/metrics, which unlike ReadMemStats does not stop the
// world.
type HeapProbe struct {
	base      uint64
	gcPercent int // the GOGC to restore at Stop
	peak      atomic.Uint64
	done      atomic.Bool
	wg        sync.WaitGroup
}

// StartHeapProbe collects garbage, so that the base is the live heap, and
// starts sampling.
//
// While it samples, the collector runs at GOGC=25: what the probe means to
// catch is memory the work holds on to, and at the default pacing garbage
// not yet swept can add half the live heap again on a starved CPU.
func StartHeapProbe() *HeapProbe {
	runtime.GC()
	p := &HeapProbe{base: heapObjects(), gcPercent: debug.SetGCPercent(25)}
	p.wg.Go(func() {
		for !p.done.Load() {
			p.Sample()
			time.Sleep(time.Millisecond)
		}
	})
	return p
}

// Sample records the heap now.
func (p *HeapProbe) Sample() {
	h := heapObjects()
	for {
		cur := p.peak.Load()
		if h <= cur || p.peak.CompareAndSwap(cur, h) {
			return
		}
	}
}

// Stop ends sampling and returns the peak rise above the base, in bytes.
func (p *HeapProbe) Stop() uint64 {
	p.done.Store(true)
	p.wg.Wait()
	p.Sample()
	debug.SetGCPercent(p.gcPercent)
	return p.peak.Load() - min(p.peak.Load(), p.base)
}

// heapObjects is the heap's live and not yet swept objects, in bytes.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// StreamMemorySize is the size of the file the streaming memory tests
// write: 64 MB, or 24 MB under -short, which is still half as large again
// as the 16 MB (plus a few sections) they allow the heap to rise, so a
// stream that holds the whole file fails either way.
func StreamMemorySize() int {
	if testing.Short() {
		return 24 << 20
	}
	return 64 << 20
}

// ScalingSizes is the file sizes in MB that scaling benchmarks run: 1, 10
// and 100, or those up to DOCPIPE_SCALING_MAX_MB (e.g. 10 on a slow
// machine).
func ScalingSizes() []int {
	sizes := []int{1, 10, 100}
	v := os.Getenv("DOCPIPE_SCALING_MAX_MB")
	if v == "" {
		return sizes
	}
	maxMB, err := strconv.Atoi(v)
	if err != nil {
		return sizes
	}
	var kept []int
	for _, s := range sizes {
		if s <= maxMB {
			kept = append(kept, s)
		}
	}
	return kept
}

// BenchPerMB runs run once per iteration of b on an input of mb MB and
// reports s/MB, how far the heap rose (peak-heap-MB, and per MB of input)
// and the units the last run produced.
func BenchPerMB(b *testing.B, mb int, run func() (units int, err error)) {
	var peak uint64
	var elapsed time.Duration
	var units int
	for b.Loop() {
		probe := StartHeapProbe()
		start := time.Now()
		n, err := run()
		elapsed += time.Since(start)
		peak = max(peak, probe.Stop())
		if err != nil {
			b.Fatal(err)
		}
		units = n
	}
	b.ReportMetric(elapsed.Seconds()/float64(b.N)/float64(mb), "s/MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak)/(1<<20)/float64(mb), "peak-heap-MB/MB")
	b.ReportMetric(float64(units), "units")
}
