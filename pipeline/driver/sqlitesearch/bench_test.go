package sqlitesearch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/search"
)

// benchSegments is the size of the index BenchmarkSearch queries.
const benchSegments = 100_000

// BenchmarkSearch queries an index of 100,000 segments of about 150
// words each (500 documents of 200 pages, words drawn from a
// 20,000-word vocabulary with a Zipf distribution, as words of a
// language are): a rare word, a common one (in about a third of the
// segments), a phrase, a prefix and a query limited to one project.
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
			for b.Loop() {
				h, err := x.Search(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				hits = len(h)
			}
			b.ReportMetric(float64(hits), "hits")
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
		e := search.Entry{Workflow: wf, Segment: i%200 + 1, Kind: "page", AudioStartMS: -1, AudioEndMS: -1, Fields: search.Fields{Body: sb.String()}}
		if err := insert(ctx, tx, e); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	return x
}
