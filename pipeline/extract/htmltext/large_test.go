package htmltext

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
)

// writeFlat is paragraphs in <body>, a heading every 20.
func writeFlat(path string, size int) error {
	return extracttest.WriteRepeated(path, size, "<!doctype html><html><head><title>t</title></head><body>\n", "</body></html>\n",
		func(w io.Writer, i int) {
			if i%20 == 0 {
				fmt.Fprintf(w, "<h2>Part %d</h2>\n", i)
			}
			fmt.Fprintf(w, "<p>"+extracttest.Sentence+"<b>bold</b> and <a href=\"#x\">a link</a>.</p>\n", i)
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
	return extracttest.WriteRepeated(path, size, head, tail, func(w io.Writer, i int) {
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
		fmt.Fprintf(w, "<p>"+extracttest.Sentence+"<em>emphasis</em> and <a href=\"mailto:office%d@example.com\">write</a>.</p>\n", i, i)
		fmt.Fprintf(w, `<table><thead><tr><th>Item</th><th>Cost</th></tr></thead><tbody>`+
			`<tr><td>Row %d</td><td><div><span>%d.00</span></div></td></tr><tr><td><p>Paths</p></td><td>$450</td></tr></tbody></table>`+"\n", i, i)
		fmt.Fprintf(w, "<ul><li>one<ul><li>nested <b>%d</b></li><li>more</li></ul></li><li>two</li></ul></div></div></section>\n", i)
	})
}

// measure runs x once and returns the wall time and how far the heap
// rose while it ran.
func measure(x func()) (time.Duration, uint64) {
	probe := extracttest.StartHeapProbe()
	start := time.Now()
	x()
	return time.Since(start), probe.Stop()
}

// BenchmarkExtractLarge extracts flat and nested markup of 1, 10 and
// 100 MB from a file and reports seconds and peak heap per MB of file.
// s/MB must stay flat as the file grows (a growing one is a quadratic
// somewhere). 1 MB is under streamFrom and takes the tree path, whose
// parse tree costs about 12 MB per MB; from 10 MB the streaming path must
// stay well under 3.
func BenchmarkExtractLarge(b *testing.B) {
	for _, g := range []struct {
		name  string
		write func(string, int) error
	}{{"flat", writeFlat}, {"nested", writeNested}} {
		for _, mb := range extracttest.ScalingSizes() {
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
