package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// Scale: 10,000 analyses in the SQLite table (a third failed, a third
// running, a third waiting) and one of 3,000 segments. Every page and API
// route is measured through the whole handler stack; the goal is well
// under 300 ms per page on the embedded default.
const (
	benchAnalyses = 10_000
	benchSegments = 3_000
)

var (
	benchOnce   sync.Once
	benchBundle *testBundle
	benchBig    pipeline.Registration
)

func seedScale(b *testing.B) {
	benchOnce.Do(func() {
		tb := setup(b, nil)
		ctx := context.Background()
		stages := pipelinefile.Default().Stages
		start := time.Now().Add(-time.Hour)
		for i := range benchAnalyses {
			at := start.Add(time.Duration(i) * time.Millisecond)
			doc := pipeline.Document{ProjectID: "default", ID: pipeline.NewIDAt(at), FileName: fmt.Sprintf("doc-%05d.pdf", i), SHA256: fmt.Sprintf("%064x", i), CreatedAt: at}
			wf := pipeline.Workflow{ID: pipeline.NewIDAt(at), ProjectID: "default", DocumentID: doc.ID, FileName: doc.FileName, Status: pipeline.WorkflowPending, TotalSegments: 10, CreatedAt: at, UpdatedAt: at}
			if err := tb.repo.CreateWorkflow(ctx, doc, wf, stages); err != nil {
				b.Fatal(err)
			}
			ref := pipeline.WorkflowRef{ProjectID: "default", DocumentID: doc.ID, WorkflowID: wf.ID}
			switch i % 3 {
			case 1:
				_, err := tb.repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, "")
				if err != nil {
					b.Fatal(err)
				}
			case 2:
				_, err := tb.repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowFailed, "invalid document: file is empty")
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		benchBig = tb.register(b, "big.pdf", pipeline.WorkflowInProgress, "")
		tb.addSegments(b, benchBig, benchSegments)
		if err := tb.repo.UpdateWorkflowInfo(ctx, benchBig.Ref(), pipeline.WorkflowInfo{TotalSegments: ptr(benchSegments)}); err != nil {
			b.Fatal(err)
		}
		benchBundle = tb
	})
	if benchBundle == nil {
		b.Fatal("seeding failed")
	}
}

func BenchmarkRoutes(b *testing.B) {
	seedScale(b)
	tb := benchBundle
	id := benchBig.Workflow.ID
	// a cursor deep into the failed analyses
	_, deep, err := statusPage(context.Background(), tb.repo.Table(), pipeline.WorkflowFailed, "", 2000)
	if err != nil {
		b.Fatal(err)
	}
	routes := []struct{ name, url string }{
		{"page/overview", "/"},
		{"page/failed", "/failed"},
		{"page/failed-deep", "/failed?cursor=" + deep},
		{"page/projects", "/projects"},
		{"page/analysis-3000-segments", "/analyses/" + id},
		{"page/upload", "/upload"},
		{"api/list-in-progress", "/api/analyses?status=in_progress"},
		{"api/list-failed-deep", "/api/analyses?status=failed&limit=500&cursor=" + deep},
		{"api/analysis", "/api/analyses/" + id},
		{"api/segments-2000", "/api/analyses/" + id + "/segments?limit=2000"},
		{"api/segment", "/api/analyses/" + id + "/segments/1500"},
	}
	for _, r := range routes {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				tb.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, r.url, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", r.url, rec.Code, rec.Body)
				}
			}
		})
	}
	b.Run("live/snapshot", func(b *testing.B) {
		for b.Loop() {
			if _, err := tb.server.snapshot(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
