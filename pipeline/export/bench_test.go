package export_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/export"
)

// BenchmarkExportDocuments exports projects of 500 and 2,000 completed
// two-page documents to io.Discard and reports the peak heap in use while
// it runs, which stays flat as the number of documents grows.
func BenchmarkExportDocuments(b *testing.B) {
	for _, docs := range []int{500, 2000} {
		b.Run(fmt.Sprintf("documents=%d", docs), func(b *testing.B) {
			src := exportFixture(b, docs)
			ctx := context.Background()
			var peak atomic.Uint64
			for b.Loop() {
				runtime.GC()
				stop := samplePeakHeap(&peak)
				st, err := export.Run(ctx, src, export.Filter{Project: "p"}, export.Options{}, &export.JSONLines{W: io.Discard})
				stop()
				if err != nil {
					b.Fatal(err)
				}
				if st.Documents != docs || st.Rows != 2*docs {
					b.Fatalf("exported %+v, want %d documents", st, docs)
				}
			}
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(docs*b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}

// samplePeakHeap records the largest HeapInuse seen until stop is called.
func samplePeakHeap(peak *atomic.Uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}

func exportFixture(b *testing.B, docs int) export.Source {
	b.Helper()
	dir := b.TempDir()
	tb, err := sqlitetable.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tb.Close() })
	blobs, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	repo := pipeline.NewRepository(tb)
	ctx := context.Background()
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 60)
	for i := range docs {
		doc := pipeline.Document{ProjectID: "p", ID: pipeline.NewID(), FileName: fmt.Sprintf("doc-%d.pdf", i), SHA256: fmt.Sprintf("%064d", i)}
		wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: "p", DocumentID: doc.ID, FileName: doc.FileName}
		if err := repo.CreateWorkflow(ctx, doc, wf, []pipeline.Stage{{Name: "segment_builder"}}); err != nil {
			b.Fatal(err)
		}
		ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: doc.ID, WorkflowID: wf.ID}
		for key, body := range map[string]string{
			pipeline.UnitsBlobKey(ref):          `[{"index":1,"kind":"page"},{"index":2,"kind":"page"}]`,
			pipeline.SegmentTextBlobKey(ref, 1): text,
			pipeline.SegmentTextBlobKey(ref, 2): text,
		} {
			if err := blob.PutBytes(ctx, blobs, key, []byte(body)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowCompleted, ""); err != nil {
			b.Fatal(err)
		}
	}
	return export.Source{Repo: repo, Blobs: blobs}
}
