package pdftext

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// The pure-Go backend streams pages in order, each unit the one Extract
// returns for it, and stops at emit's first error, whether it extracts one
// page at a time or several at once.
func TestPureGoStreamPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := pdfgen.WriteFile(path, pdfgen.Options{Pages: 40, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	whole, err := (&PureGo{Parallel: 1}).Extract(ctx, path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, parallel := range []int{1, 4} {
		x := &PureGo{Parallel: parallel}
		var got []extract.Unit
		n, err := x.StreamPages(ctx, path, extract.Limits{}, func(u extract.Unit) error {
			got = append(got, u)
			return nil
		})
		if err != nil || n != 40 || len(got) != 40 {
			t.Fatalf("parallel %d: StreamPages = %d, %v with %d units; want 40 pages", parallel, n, err, len(got))
		}
		for i, u := range got {
			if u != whole[i] || u.Index != i+1 {
				t.Fatalf("parallel %d: unit %d = %+v, Extract gave %+v", parallel, i, u, whole[i])
			}
		}

		stop := errors.New("stop")
		calls := 0
		_, err = x.StreamPages(ctx, path, extract.Limits{}, func(u extract.Unit) error {
			calls++
			if u.Index == 5 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || calls != 5 {
			t.Fatalf("parallel %d: emit error: got %v after %d calls, want %v after 5", parallel, err, calls, stop)
		}

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := x.StreamPages(cancelled, path, extract.Limits{}, func(extract.Unit) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("parallel %d: cancelled context: got %v", parallel, err)
		}
	}
}

// A page over a limit fails the document after the pages before it, and
// none after it, were emitted, however many pages are extracted at once.
func TestPureGoStreamStopsAtPageOverLimit(t *testing.T) {
	t.Parallel()
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	var kids []string
	for i := range 12 {
		kids = append(kids, fmt.Sprintf("%d 0 R", 3+2*i))
		text := "(short) Tj"
		if i == 6 {
			text = "(this page draws too many characters) Tj"
		}
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /Contents %d 0 R >>", 4+2*i),
			stream("BT /F1 12 Tf 72 700 Td "+text+" ET"))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count 12 /Resources << /Font << /F1 %d 0 R >> >> >>", strings.Join(kids, " "), len(objs)+1)
	path := rawPDF(t, append(objs, helvetica)...)
	for _, parallel := range []int{1, 4} {
		var got []int
		_, err := (&PureGo{Parallel: parallel}).StreamPages(context.Background(), path, extract.Limits{MaxPageGlyphs: 10}, func(u extract.Unit) error {
			got = append(got, u.Index)
			return nil
		})
		wantErr[*steperr.TooLargeError](t, err)
		if !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) {
			t.Errorf("parallel %d: emitted pages %v before the error, want 1-6", parallel, got)
		}
	}
}

// Streaming a long PDF holds the walk's path through the page tree and one
// page, not the pages before or after it (their dictionaries, about 500
// bytes a page here) nor their text: at page 100 the live heap is about
// the same in a document of 1,000 pages as in one of 150. Extracting
// several pages at once adds the pages in flight, a few ranges per worker
// in either document, and the workers' buffers, which are live or not as the
// measurement catches them: a wider margin (1.5 MiB), still half of what
// the 900 pages more would hold (3 KB of text and 500 bytes of dictionary
// each).
func TestPureGoStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("extracts 2,300 pages")
	}
	for _, c := range []struct{ parallel, margin int64 }{{1, 256 << 10}, {2, 3 << 19}} {
		liveAt100 := map[int]int64{}
		for _, pages := range []int{150, 1000} {
			path := filepath.Join(t.TempDir(), "doc.pdf")
			if err := pdfgen.WriteFile(path, pdfgen.Options{Pages: pages, Seed: 9}); err != nil {
				t.Fatal(err)
			}
			x := &PureGo{Parallel: int(c.parallel)}
			n, err := x.StreamPages(context.Background(), path, extract.Limits{}, func(u extract.Unit) error {
				// The least of ten samples: what a page holds on to is live
				// in each of them, a worker's passing buffer is not.
				if u.Index >= 100 && u.Index < 110 {
					runtime.GC()
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					if v, ok := liveAt100[pages]; !ok || int64(m.HeapAlloc) < v {
						liveAt100[pages] = int64(m.HeapAlloc)
					}
				}
				return nil
			})
			if err != nil || n != pages {
				t.Fatalf("got %d pages of %d, %v", n, pages, err)
			}
		}
		grew := liveAt100[1000] - liveAt100[150]
		t.Logf("parallel %d: live heap at page 100: %.2f MB of 150 pages, %.2f MB of 1,000", c.parallel, float64(liveAt100[150])/(1<<20), float64(liveAt100[1000])/(1<<20))
		if grew > c.margin {
			t.Errorf("parallel %d: at page 100, the live heap is %d bytes larger in a document of 1,000 pages than in one of 150: pages are held", c.parallel, grew)
		}
	}
}
