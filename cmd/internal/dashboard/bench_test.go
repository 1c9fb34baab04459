package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
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
	benchReview pipeline.Review
)

// seedReview parks one more analysis on a review, with a summary of many
// sentences to show.
func seedReview(b *testing.B, tb *testBundle) pipeline.Review {
	reg := tb.register(b, "reviewed.pdf", pipeline.WorkflowWaitingReview, "")
	st := pipeline.Stage{Name: "check", Scope: pipeline.ScopeDocument, Run: pipeline.RunSpec{Review: &pipeline.ReviewSpec{DueSeconds: 3600}}}
	v, err := tb.repo.OpenReview(context.Background(), reg.Ref(), st, pipeline.StepProgress{FileName: "reviewed.pdf"}, "")
	if err != nil {
		b.Fatal(err)
	}
	sentences := make([]string, 50)
	for i := range sentences {
		sentences[i] = fmt.Sprintf(`{"segment":%d,"text":"Sentence %d of the summary, long enough to read like one.","score":0.5}`, i, i)
	}
	if err := blob.PutBytes(context.Background(), tb.blobs, pipeline.SummaryBlobKey(v.Ref()), []byte(`{"summary":[`+strings.Join(sentences, ",")+`]}`)); err != nil {
		b.Fatal(err)
	}
	return v
}

func seedScale(b *testing.B) {
	benchOnce.Do(func() {
		// The built-in pipeline, as serve has it: pages read definitions.
		tb := setup(b, func(o *Options) {
			o.Repo = pipeline.NewRepository(o.Repo.Table(), pipeline.WithBuiltinPipeline(pipelinefile.Default()))
		})
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
		benchReview = seedReview(b, tb)
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
		{"page/reviews", "/reviews"},
		{"page/review", "/reviews/" + benchReview.ID},
		{"api/review", "/api/reviews/" + benchReview.ID},
		{"api/list-in-progress", "/api/analyses?status=in_progress"},
		{"api/list-failed-deep", "/api/analyses?status=failed&limit=500&cursor=" + deep},
		{"api/analysis", "/api/analyses/" + id},
		{"api/segments-2000", "/api/analyses/" + id + "/segments?limit=2000"},
		{"api/segment", "/api/analyses/" + id + "/segments/1500"},
	}
	for _, r := range routes {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, r.url, nil)
				req.Host = "127.0.0.1" // served without a token: loopback only
				rec := httptest.NewRecorder()
				tb.handler.ServeHTTP(rec, req)
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
