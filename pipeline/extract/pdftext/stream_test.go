package pdftext

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// The pure-Go backend streams pages in order, each unit the one Extract
// returns for it, and stops at emit's first error.
func TestPureGoStreamPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := pdfgen.WriteFile(path, pdfgen.Options{Pages: 40, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	x := NewPureGo()
	ctx := context.Background()
	whole, err := x.Extract(ctx, path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var got []extract.Unit
	n, err := x.StreamPages(ctx, path, extract.Limits{}, func(u extract.Unit) error {
		got = append(got, u)
		return nil
	})
	if err != nil || n != 40 || len(got) != 40 {
		t.Fatalf("StreamPages = %d, %v with %d units; want 40 pages", n, err, len(got))
	}
	for i, u := range got {
		if u != whole[i] || u.Index != i+1 {
			t.Fatalf("unit %d = %+v, Extract gave %+v", i, u, whole[i])
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
		t.Fatalf("emit error: got %v after %d calls, want %v after 5", err, calls, stop)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := x.StreamPages(cancelled, path, extract.Limits{}, func(extract.Unit) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: got %v", err)
	}
}

// Streaming a long PDF holds the walk's path through the page tree and one
// page, not the pages before or after it (their dictionaries, about 500
// bytes a page here) nor their text: at page 100 the live heap is about
// the same in a document of 1,000 pages as in one of 150.
func TestPureGoStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("extracts 1,150 pages")
	}
	liveAt100 := map[int]int64{}
	for _, pages := range []int{150, 1000} {
		path := filepath.Join(t.TempDir(), "doc.pdf")
		if err := pdfgen.WriteFile(path, pdfgen.Options{Pages: pages, Seed: 9}); err != nil {
			t.Fatal(err)
		}
		n, err := NewPureGo().StreamPages(context.Background(), path, extract.Limits{}, func(u extract.Unit) error {
			if u.Index == 100 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				liveAt100[pages] = int64(m.HeapAlloc)
			}
			return nil
		})
		if err != nil || n != pages {
			t.Fatalf("got %d pages of %d, %v", n, pages, err)
		}
	}
	grew := liveAt100[1000] - liveAt100[150]
	t.Logf("live heap at page 100: %.2f MB of 150 pages, %.2f MB of 1,000", float64(liveAt100[150])/(1<<20), float64(liveAt100[1000])/(1<<20))
	if grew > 256<<10 {
		t.Errorf("at page 100, the live heap is %d bytes larger in a document of 1,000 pages than in one of 150: pages are held", grew)
	}
}
