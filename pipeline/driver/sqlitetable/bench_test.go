package sqlitetable_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

func benchWorkflow(b *testing.B, repo *pipeline.Repository) pipeline.WorkflowRef {
	b.Helper()
	doc := pipeline.Document{ProjectID: "bench", ID: pipeline.NewID(), SHA256: fmt.Sprintf("%064x", 1), FileName: "f.pdf"}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: doc.ProjectID, DocumentID: doc.ID, FileName: doc.FileName}
	if err := repo.CreateWorkflow(b.Context(), doc, wf, pipelinefile.Default().Stages); err != nil {
		b.Fatal(err)
	}
	return pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
}

// BenchmarkTransitions measures step transitions (conditional update plus
// audit item, one transaction each) from parallel workers, each flipping a
// step of its own workflow back and forth.
func BenchmarkTransitions(b *testing.B) {
	repo := pipeline.NewRepository(openTable(b))
	const parallelism = 4
	b.SetParallelism(parallelism)
	refs := make([]pipeline.WorkflowRef, runtime.GOMAXPROCS(0)*parallelism)
	for i := range refs {
		refs[i] = benchWorkflow(b, repo)
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ref := refs[next.Add(1)-1]
		from, to := pipeline.StepPending, pipeline.StepInProgress
		for pb.Next() {
			ok, err := repo.TransitionSteps(b.Context(), ref, pipeline.StepChange{Step: pipeline.StepFormatParser, From: []pipeline.StepStatus{from}, To: to})
			if !ok || err != nil {
				b.Errorf("transition: %v %v", ok, err)
				return
			}
			from, to = to, from
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transitions/s")
}

// BenchmarkFinishSegment measures counted segment finishes from parallel
// workers (segment update plus counter add, one transaction each).
func BenchmarkFinishSegment(b *testing.B) {
	repo := pipeline.NewRepository(openTable(b))
	ref := benchWorkflow(b, repo)
	segs := make([]pipeline.Segment, b.N)
	for i := range segs {
		segs[i] = pipeline.Segment{WorkflowID: ref.WorkflowID, Index: i + 1, Kind: "page", TextKey: "k"}
	}
	if err := repo.PutSegments(b.Context(), segs); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1))
			if ok, err := repo.FinishSegment(b.Context(), ref.WorkflowID, i, pipeline.SegmentDone, pipeline.SegmentResult{Language: "en"}); !ok || err != nil {
				b.Errorf("finish %d: %v %v", i, ok, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "segments/s")
}

// BenchmarkPutSegments measures writing segment items in transactions of 100.
func BenchmarkPutSegments(b *testing.B) {
	repo := pipeline.NewRepository(openTable(b))
	ref := benchWorkflow(b, repo)
	const batch = 100
	seg := 0
	b.ResetTimer()
	for b.Loop() {
		segs := make([]pipeline.Segment, batch)
		for i := range segs {
			seg++
			segs[i] = pipeline.Segment{WorkflowID: ref.WorkflowID, Index: seg, Kind: "page", TextKey: fmt.Sprintf("p/d/w/segments/%06d/text.txt", seg), Chars: 1800}
		}
		if err := repo.PutSegments(b.Context(), segs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "segments/s")
}

// BenchmarkListSegments measures paging through 5,000 segments.
func BenchmarkListSegments(b *testing.B) {
	repo := pipeline.NewRepository(openTable(b))
	ref := benchWorkflow(b, repo)
	const n = 5000
	segs := make([]pipeline.Segment, n)
	for i := range segs {
		segs[i] = pipeline.Segment{WorkflowID: ref.WorkflowID, Index: i + 1, Kind: "page", TextKey: fmt.Sprintf("p/d/w/segments/%06d/text.txt", i+1), Chars: 1800}
	}
	if err := repo.PutSegments(b.Context(), segs); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		count, token := 0, ""
		for {
			page, next, err := repo.ListSegments(b.Context(), ref.WorkflowID, 1000, token)
			if err != nil {
				b.Fatal(err)
			}
			count += len(page)
			if token = next; token == "" {
				break
			}
		}
		if count != n {
			b.Fatalf("listed %d segments, want %d", count, n)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "segments/s")
}
