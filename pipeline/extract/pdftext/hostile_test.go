package pdftext

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/hostile"
)

func writeHostile(tb testing.TB, name string, write func(io.Writer) error) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := write(f); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Pages whose drawing instructions pass a limit fail the document as too
// large, whichever limit it is.
func TestPureGoContentLimits(t *testing.T) {
	small := extract.Limits{MaxContentStreamBytes: 1 << 20, MaxPageContentBytes: 2 << 20, MaxPageGlyphs: 10_000}
	for _, tc := range []struct {
		name  string
		write func(io.Writer) error
		want  string
	}{
		{"glyphs", func(w io.Writer) error { return hostile.ContentBomb(w, 1<<20) }, "more than 10000 characters"},
		{"stream", func(w io.Writer) error { return hostile.OperatorBomb(w, 3<<20) }, "content stream is over 1 MiB"},
		{"page", func(w io.Writer) error { return hostile.FormFanOut(w, 8) }, "page's content is over 2 MiB"},
		{"string", func(w io.Writer) error { return hostile.StringBomb(w, 2<<20) }, "string over 1024 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeHostile(t, tc.name+".pdf", tc.write)
			limits := small
			switch tc.name {
			case "page":
				limits.MaxPageGlyphs = 1 << 30 // the forms draw 10^8 glyphs: let the bytes stop them
			case "string":
				limits = extract.Limits{}
			}
			_, err := NewPureGo().Extract(context.Background(), path, limits)
			var tooLarge *steperr.TooLargeError
			if !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a TooLargeError saying %q", err, tc.want)
			}
		})
	}
}

// Instructions that hold no text keep memory small however many there
// are: operands without an operator, arrays opened and never closed.
func TestPureGoContentGarbage(t *testing.T) {
	size := int64(8 << 20)
	if testing.Short() {
		size = 4 << 20 // the library would still take more than the allowance
	}
	for _, tc := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"operands", func(w io.Writer) error { return hostile.OperandBomb(w, size) }},
		{"nesting", func(w io.Writer) error { return hostile.NestingBomb(w, size) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeHostile(t, tc.name+".pdf", tc.write)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			units, err := NewPureGo().Extract(context.Background(), path, extract.Limits{})
			runtime.ReadMemStats(&after)
			if err != nil || len(units) != 1 || units[0].Text != "" {
				t.Fatalf("got %v, %v; want one empty page", units, err)
			}
			// The library's interpreter held them all: 8 MB of operands
			// took 788 MB, of brackets 160 MB. Ours allocates about
			// 20 MB, whatever the size.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("allocated %d MB for %d MB of instructions", grew>>20, size>>20)
			}
		})
	}
}

// BenchmarkPureGoContentBomb measures what a page of tens of MB of
// show-text operators costs before the glyph limit stops it.
func BenchmarkPureGoContentBomb(b *testing.B) {
	path := writeHostile(b, "bomb.pdf", func(w io.Writer) error { return hostile.ContentBomb(w, 48<<20) })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		_, err := NewPureGo().Extract(context.Background(), path, extract.Limits{})
		var tooLarge *steperr.TooLargeError
		if !errors.As(err, &tooLarge) {
			b.Fatalf("got %v, want a TooLargeError", err)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MB-alloc/op")
}

// structureBombs are files of a few hundred bytes whose numbers ask the
// library for a cross-reference table or a row of tens of GB (the process
// dies of it, beyond any recover) or send it round a loop for ever.
var structureBombs = []struct {
	name  string
	write func(io.Writer) error
	want  string
}{
	{"table-offset", hostile.XrefOffsetBomb, "cross-reference table declares 900000005 objects"},
	{"trailer-size", hostile.TrailerSizeBomb, "cross-reference table declares 2000000000 objects"},
	{"stream-size", hostile.XrefStreamSizeBomb, "cross-reference stream declares 2000000000 objects"},
	{"stream-index", hostile.XrefStreamIndexBomb, "cross-reference stream declares 900000007 objects"},
	{"stream-empty-rows", hostile.XrefStreamEmptyRowBomb, "rows of no bytes"},
	{"stream-row-width", hostile.XrefStreamWidthBomb, "field width 1099511627776"},
	{"stream-predictor", hostile.XrefStreamPredictorBomb, "/Columns 1099511627776"},
	{"content-predictor", hostile.PredictorBomb, "/Columns 1099511627776"},
	{"loop", hostile.XrefLoop, "cross-reference sections form a loop"},
}

// The pure-Go backend refuses each, as an invalid document that says why.
func TestPureGoStructureBombs(t *testing.T) {
	for _, tc := range structureBombs {
		t.Run(tc.name, func(t *testing.T) {
			path := writeHostile(t, tc.name+".pdf", tc.write)
			for op, call := range map[string]func() error{
				"Extract": func() error { _, err := NewPureGo().Extract(context.Background(), path, extract.Limits{}); return err },
				"Pages":   func() error { _, err := NewPureGo().Pages(context.Background(), path); return err },
			} {
				var invalid *steperr.InvalidDocumentError
				if err := call(); !errors.As(err, &invalid) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: got %v, want an InvalidDocumentError saying %q", op, err, tc.want)
				}
			}
		})
	}
}

// pdfcpu, which counts small files' pages and decrypts, keeps its
// cross-reference table in a map and bounds its rows: it reads each bomb
// without the guard, and in bounded memory.
func TestClaimedPagesStructureBombs(t *testing.T) {
	for _, tc := range structureBombs {
		t.Run(tc.name, func(t *testing.T) {
			path := writeHostile(t, tc.name+".pdf", tc.write)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			n, ok := claimedPages(context.Background(), path)
			runtime.ReadMemStats(&after)
			if ok && n != 1 {
				t.Errorf("claimed %d pages, want 1 or no answer", n)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("allocated %d MB", grew>>20)
			}
		})
	}
}
