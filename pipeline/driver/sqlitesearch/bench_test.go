package sqlitesearch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/docread"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/search"
)

// benchSegments is the size of the index BenchmarkSearch queries.
const benchSegments = 100_000

// BenchmarkSearch queries an index of 100,000 segments of about 150
// words each (500 documents of 200 pages, words drawn from a
// 20,000-word vocabulary with a Zipf distribution, as words of a
// language are): a rare word, a common one (in 73% of the segments), a
// phrase of two common words, a prefix and a query limited to one
// project: all but the rare word match more segments than are ranked
// (RankedMatches).
func BenchmarkSearch(b *testing.B) {
	x := benchIndex(b)
	for _, q := range []search.Query{
		{Text: "w19999"},
		{Text: "w12"},
		{Text: `"w3 w4"`},
		{Text: "w123*"},
		{Text: "w12 AND w40", Project: "p1"},
	} {
		b.Run(q.Text, func(b *testing.B) {
			ctx := context.Background()
			hits := 0
			cpu := processCPU()
			for b.Loop() {
				h, err := x.Search(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				hits = len(h.Hits)
			}
			b.ReportMetric(float64(hits), "hits")
			b.ReportMetric(float64((processCPU()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

func benchIndex(b *testing.B) *Index {
	b.Helper()
	path := filepath.Join(b.TempDir(), "state.db")
	ix := &Indexer{}
	tb, err := sqlitetable.Open(path, sqlitetable.WithWriteHook(ix))
	if err != nil {
		b.Fatal(err)
	}
	tb.Close()
	x, err := Open(path, ix)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { x.Close() })
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, 19_999)
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	ins := &rowWriter{db: &sqlitetable.HookTx{Tx: tx}, old: map[rowKey]oldRow{}} // every document new
	var sb strings.Builder
	for i := range benchSegments {
		sb.Reset()
		for w := range 150 {
			if w > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "w%d", zipf.Uint64())
		}
		doc := i / 200
		wf := pipeline.Workflow{ID: fmt.Sprintf("W%d", doc), ProjectID: fmt.Sprintf("p%d", doc%5), DocumentID: fmt.Sprintf("D%d", doc), FileName: "f.pdf", Pipeline: "docpipe", PipelineVersion: 1}
		seg := docread.Segment{Index: i%200 + 1, Kind: "page", Text: sb.String()}
		if err := ins.putSegment(ctx, wf, seg, search.SegmentDigest(seg)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	return x
}

// BenchmarkIndexWorkflow indexes a completed workflow of 3,000 pages of
// 3 KB (the size of the generated PDF's pages) read from a directory
// blob store: the work its completion adds to a 3,000-page run.
func BenchmarkIndexWorkflow(b *testing.B) {
	dir := b.TempDir()
	blobs, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const pages = 3000
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "D", WorkflowID: "W"}
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, 19_999)
	var units strings.Builder
	units.WriteString("[")
	for i := 1; i <= pages; i++ {
		if i > 1 {
			units.WriteString(",")
		}
		fmt.Fprintf(&units, `{"index":%d,"kind":"page"}`, i)
		var sb strings.Builder
		for sb.Len() < 3000 {
			fmt.Fprintf(&sb, "w%d ", zipf.Uint64())
		}
		if err := blob.PutBytes(ctx, blobs, pipeline.SegmentTextBlobKey(ref, i), []byte(sb.String())); err != nil {
			b.Fatal(err)
		}
	}
	units.WriteString("]")
	if err := blob.PutBytes(ctx, blobs, pipeline.UnitsBlobKey(ref), []byte(units.String())); err != nil {
		b.Fatal(err)
	}
	ix := &Indexer{Blobs: blobs}
	tb, err := sqlitetable.Open(filepath.Join(dir, "state.db"), sqlitetable.WithWriteHook(ix))
	if err != nil {
		b.Fatal(err)
	}
	tb.Close()
	x, err := Open(filepath.Join(dir, "state.db"), ix)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	wf := pipeline.Workflow{ID: "W", ProjectID: "p", DocumentID: "D", FileName: "f.pdf", Pipeline: "docpipe", PipelineVersion: 1}
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		// A completion indexes a new document: the rows of the last
		// round are removed outside the timer.
		b.StopTimer()
		del, err := x.db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		old, err := replaceDocument(ctx, &sqlitetable.HookTx{Tx: del}, "D")
		if err != nil {
			b.Fatal(err)
		}
		if err := old.finish(ctx, pipeline.Workflow{}); err != nil {
			b.Fatal(err)
		}
		if err := del.Commit(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpuBefore := processCPU()
		tx, err := x.db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.indexOrRecord(ctx, &sqlitetable.HookTx{Tx: tx}, wf, known{}); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - cpuBefore
	}
	b.StopTimer()
	b.ReportMetric(float64(pages)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	var rows int
	if err := x.db.QueryRow(`SELECT COUNT(*) FROM search_rows`).Scan(&rows); err != nil || rows != pages {
		b.Fatalf("%d rows indexed, want %d (%v)", rows, pages, err)
	}
}
