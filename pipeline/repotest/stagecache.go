package repotest

import (
	"fmt"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

var stageCacheTests = []struct {
	name string
	fn   func(t *testing.T, tb table.Table, cfg tabletest.Config)
}{
	{"StageCacheRoundTrip", testStageCacheRoundTrip},
	{"StageCacheManyAtOnce", testStageCacheManyAtOnce},
	{"StageCacheSameKeyTwice", testStageCacheSameKeyTwice},
	{"ReusedStepAndAudit", testReusedStepAndAudit},
}

// An entry reads back as written; a missing key is no error; writing the
// same key again keeps the newest producer.
func testStageCacheRoundTrip(t *testing.T, tb table.Table, _ tabletest.Config) {
	repo := pipeline.NewRepository(tb)
	ctx := t.Context()
	f := setup(t, repo)
	key := pipeline.NewCacheKey(pipeline.Stage{Name: "a", Scope: pipeline.ScopeSegment}, "test/1").Add("text", []byte(pipeline.NewID())).Sum()
	if _, found, err := repo.LookupStageCache(ctx, key); err != nil || found {
		t.Fatalf("lookup before any write: found %v, err %v", found, err)
	}
	want := pipeline.CachedOutput{Key: key, Stage: "a", Workflow: f.ref, Blob: pipeline.StageBatchBlobKey(f.ref, "a", 1), Index: 7}
	if err := repo.RecordStageCache(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, found, err := repo.LookupStageCache(ctx, key)
	if err != nil || !found {
		t.Fatalf("lookup: found %v, err %v", found, err)
	}
	if got.CreatedAt == "" {
		t.Errorf("entry has no created_at: %+v", got)
	}
	got.CreatedAt = ""
	if got != want {
		t.Errorf("entry = %+v, want %+v", got, want)
	}
	later := setup(t, repo)
	want.Workflow, want.Blob = later.ref, pipeline.StageBatchBlobKey(later.ref, "a", 3)
	if err := repo.RecordStageCache(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := repo.LookupStageCache(ctx, key); got.Workflow != later.ref || got.Blob != want.Blob {
		t.Errorf("after a second producer: %+v, want it to name %s", got, later.ref.WorkflowID)
	}
}

// More entries than one transaction holds are all written.
func testStageCacheManyAtOnce(t *testing.T, tb table.Table, _ tabletest.Config) {
	repo := pipeline.NewRepository(tb)
	ctx := t.Context()
	f := setup(t, repo)
	run := pipeline.NewID()
	var outs []pipeline.CachedOutput
	for i := 1; i <= table.MaxTransactItems+5; i++ {
		key := pipeline.NewCacheKey(pipeline.Stage{Name: "a"}, "test/1").Add("segment", fmt.Appendf(nil, "%s/%d", run, i)).Sum()
		outs = append(outs, pipeline.CachedOutput{Key: key, Stage: "a", Workflow: f.ref, Blob: "b", Index: i})
	}
	if err := repo.RecordStageCache(ctx, outs...); err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		got, found, err := repo.LookupStageCache(ctx, o.Key)
		if err != nil || !found || got.Index != o.Index {
			t.Fatalf("entry %d: %+v found %v err %v", o.Index, got, found, err)
		}
	}
}

// Two identical segments of one batch give the same key twice: both are
// recorded, as one entry, the first given (a transaction touches an item
// once).
func testStageCacheSameKeyTwice(t *testing.T, tb table.Table, _ tabletest.Config) {
	repo := pipeline.NewRepository(tb)
	ctx := t.Context()
	f := setup(t, repo)
	key := pipeline.NewCacheKey(pipeline.Stage{Name: "a", Scope: pipeline.ScopeSegment}, "test/1").Add("text", []byte(pipeline.NewID())).Sum()
	other := pipeline.NewCacheKey(pipeline.Stage{Name: "a", Scope: pipeline.ScopeSegment}, "test/1").Add("text", []byte(pipeline.NewID())).Sum()
	blob := pipeline.StageBatchBlobKey(f.ref, "a", 1)
	outs := []pipeline.CachedOutput{
		{Key: key, Stage: "a", Workflow: f.ref, Blob: blob, Index: 1},
		{Key: other, Stage: "a", Workflow: f.ref, Blob: blob, Index: 2},
		{Key: key, Stage: "a", Workflow: f.ref, Blob: blob, Index: 3},
	}
	if err := repo.RecordStageCache(ctx, outs...); err != nil {
		t.Fatal(err)
	}
	for key, index := range map[string]int{key: 1, other: 2} {
		got, found, err := repo.LookupStageCache(ctx, key)
		if err != nil || !found || got.Index != index {
			t.Errorf("entry %s: %+v found %v err %v, want index %d", key[:8], got, found, err, index)
		}
	}
}

// A completion that reused another workflow's output says so on the step
// and in its audit item; a segment stage's counts add up per batch, and a
// later change forgets where an earlier attempt's output came from.
func testReusedStepAndAudit(t *testing.T, tb table.Table, _ tabletest.Config) {
	repo := pipeline.NewRepository(tb)
	ctx := t.Context()
	f := setup(t, repo)
	from := pipeline.NewID()
	step := pipeline.StepSegmentAnalyzer
	for _, c := range []pipeline.StageCounts{{Reused: 3, From: from}, {Reused: 2, Own: 4, From: from}} {
		if err := repo.CountStageSegments(ctx, f.wf.ID, step, c); err != nil {
			t.Fatal(err)
		}
	}
	p := progress(t, repo, f.wf.ID)
	if s := p.Steps[step]; s.SegmentsReused != 5 || s.SegmentsRun != 0 || s.SegmentsOwn != 4 {
		t.Fatalf("counts = %+v, want 5 reused, 0 run, 4 own", s)
	}
	if _, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepCompleted, ReusedFrom: from}); err != nil {
		t.Fatal(err)
	}
	if s := progress(t, repo, f.wf.ID).Steps[step]; !s.Reused() || s.ReusedFrom != from {
		t.Fatalf("step = %+v, want reused from %s", s, from)
	}
	trs, err := repo.ListTransitions(ctx, f.wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last := trs[len(trs)-1]; last.Step != step || last.ReusedFrom != from {
		t.Errorf("audit = %+v, want the completion reused from %s", last, from)
	}
	if _, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: []pipeline.StepStatus{pipeline.StepCompleted}, To: pipeline.StepPending}); err != nil {
		t.Fatal(err)
	}
	if s := progress(t, repo, f.wf.ID).Steps[step]; s.Reused() || s.ReusedFrom != "" {
		t.Errorf("after a reset the step = %+v, want no reuse", s)
	}
}
