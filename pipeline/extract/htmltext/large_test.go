package htmltext

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/extract"
)

const largeSentence = "The confidential workflow of office number %d is efficient and affluent; the staff file reports. "

// writeLarge writes head, then piece(i) for i = 0, 1, ... until the file
// holds about size bytes, then tail.
func writeLarge(path string, size int, head, tail string, piece func(w io.Writer, i int)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	cw := &countingWriter{w: w}
	io.WriteString(cw, head)
	for i := 0; cw.n < size-len(tail); i++ {
		piece(cw, i)
	}
	io.WriteString(cw, tail)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// writeFlat is paragraphs in <body>, a heading every 20.
func writeFlat(path string, size int) error {
	return writeLarge(path, size, "<!doctype html><html><head><title>t</title></head><body>\n", "</body></html>\n",
		func(w io.Writer, i int) {
			if i%20 == 0 {
				fmt.Fprintf(w, "<h2>Part %d</h2>\n", i)
			}
			fmt.Fprintf(w, "<p>"+largeSentence+"<b>bold</b> and <a href=\"#x\">a link</a>.</p>\n", i)
		})
}

// writeNested is a site layout (header, nav, aside, footer around <main>)
// whose main content is sections three deep holding cards of paragraphs,
// tables with nested markup in their cells, and nested lists. It stays far
// under the tree parser's 512-element limit, so both paths can read it.
func writeNested(path string, size int) error {
	const head = `<!doctype html><html><head><meta charset="utf-8"><title>Report</title>
<style>body{font-family:sans-serif}</style><script>var analytics = 1;</script></head>
<body><header class="site"><nav><a href="/">Home</a> | <a href="/news">News</a></nav></header>
<div class="layout"><aside>Related links</aside><main><article><h1>Annual report</h1>
<section><section>
`
	const tail = `</section></section></article></main></div><footer>(c) Example</footer></body></html>
`
	return writeLarge(path, size, head, tail, func(w io.Writer, i int) {
		if i > 0 && i%30 == 0 {
			io.WriteString(w, "</section></section>\n<section><section>\n")
		}
		if i%10 == 0 {
			fmt.Fprintf(w, "<h2>Part %d</h2>\n", i)
		}
		io.WriteString(w, "<section>")
		if i%5 == 0 {
			fmt.Fprintf(w, "<h3>Item %d</h3>", i)
		}
		io.WriteString(w, `<div class="card"><div class="card-body">`)
		fmt.Fprintf(w, "<p>"+largeSentence+"<em>emphasis</em> and <a href=\"mailto:office%d@example.com\">write</a>.</p>\n", i, i)
		fmt.Fprintf(w, `<table><thead><tr><th>Item</th><th>Cost</th></tr></thead><tbody>`+
			`<tr><td>Row %d</td><td><div><span>%d.00</span></div></td></tr><tr><td><p>Paths</p></td><td>$450</td></tr></tbody></table>`+"\n", i, i)
		fmt.Fprintf(w, "<ul><li>one<ul><li>nested <b>%d</b></li><li>more</li></ul></li><li>two</li></ul></div></div></section>\n", i)
	})
}

// measure runs x once and returns the wall time and the peak of the heap
// (HeapAlloc: live objects and those not yet swept) above what it was
// before, sampled every millisecond through runtime/metrics, which unlike
// ReadMemStats does not stop the world.
func measure(x func()) (time.Duration, uint64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	before := heap()
	var peak atomic.Uint64
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !done.Load() {
			peak.Store(max(peak.Load(), heap()))
			time.Sleep(time.Millisecond)
		}
	})
	start := time.Now()
	x()
	elapsed := time.Since(start)
	done.Store(true)
	wg.Wait()
	return elapsed, max(peak.Load(), before) - before
}

// BenchmarkExtractLarge extracts flat and nested markup of 1, 10 and
// 100 MB from a file and reports seconds and peak heap per MB of file.
// s/MB must stay flat as the file grows (a growing one is a quadratic
// somewhere). 1 MB is under streamFrom and takes the tree path, whose
// parse tree costs about 12 MB per MB; from 10 MB the streaming path must
// stay well under 3. DOCPIPE_SCALING_MAX_MB caps the sizes (e.g. 10 on a
// slow machine).
func BenchmarkExtractLarge(b *testing.B) {
	sizes := []int{1, 10, 100}
	if v := os.Getenv("DOCPIPE_SCALING_MAX_MB"); v != "" {
		var maxMB int
		fmt.Sscan(v, &maxMB)
		var kept []int
		for _, s := range sizes {
			if s <= maxMB {
				kept = append(kept, s)
			}
		}
		sizes = kept
	}
	for _, g := range []struct {
		name  string
		write func(string, int) error
	}{{"flat", writeFlat}, {"nested", writeNested}} {
		for _, mb := range sizes {
			b.Run(fmt.Sprintf("%s/MB=%d", g.name, mb), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), g.name+".html")
				if err := g.write(path, mb<<20); err != nil {
					b.Fatal(err)
				}
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				fileMB := float64(fi.Size()) / (1 << 20)
				var elapsed time.Duration
				var peak uint64
				var units int
				for b.Loop() {
					var us []extract.Unit
					var err error
					d, p := measure(func() { us, err = Extract(context.Background(), path, extract.Limits{}) })
					if err != nil {
						b.Fatal(err)
					}
					elapsed += d
					peak = max(peak, p)
					units = len(us)
				}
				b.ReportMetric(elapsed.Seconds()/float64(b.N)/fileMB, "s/MB")
				b.ReportMetric(float64(peak)/(1<<20)/fileMB, "peak-heap/MB")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(float64(units), "units")
			})
		}
	}
}
