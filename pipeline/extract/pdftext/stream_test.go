package pdftext

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
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

// Streaming a long PDF holds the page list (each page's dictionary, about
// 1.3 KB a page here) and one page's text, not the document's text (about
// 2.9 KB a page here): each page past the first 150 may add at most 2 KB.
func TestPureGoStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("extracts 1,650 pages")
	}
	peak := map[int]uint64{}
	for _, pages := range []int{150, 1500} {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("%d.pdf", pages))
		if err := pdfgen.WriteFile(path, pdfgen.Options{Pages: pages, Seed: 9}); err != nil {
			t.Fatal(err)
		}
		probe := extracttest.StartHeapProbe()
		chars := 0
		n, err := NewPureGo().StreamPages(context.Background(), path, extract.Limits{}, func(u extract.Unit) error {
			chars += len(u.Text)
			if u.Index%50 == 0 {
				probe.Sample()
			}
			return nil
		})
		peak[pages] = probe.Stop()
		if err != nil || n != pages {
			t.Fatalf("%d pages: got %d, %v", pages, n, err)
		}
		t.Logf("%d pages, %.1f MB of text: the heap grew by %.1f MB at most", pages, float64(chars)/(1<<20), float64(peak[pages])/(1<<20))
	}
	if perPage := (int64(peak[1500]) - int64(peak[150])) / 1350; perPage > 2<<10 {
		t.Errorf("the heap grew by %d bytes for 1,500 pages against %d for 150: %d bytes a page, as if the text were kept", peak[1500], peak[150], perPage)
	}
}
