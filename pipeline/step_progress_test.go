package pipeline_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/table"
)

// countingTable counts the single-item updates that reach the table.
type countingTable struct {
	table.Table
	updates atomic.Int64
}

func (c *countingTable) Update(ctx context.Context, key table.Key, updates []table.Update, cond table.Cond) (table.Item, error) {
	c.updates.Add(1)
	return c.Table.Update(ctx, key, updates, cond)
}

// parsingWorkflow opens a SQLite table, counting its updates, and a
// repository on clock, and creates a workflow whose format_parser is in
// progress.
func parsingWorkflow(t *testing.T, clock func() time.Time) (*pipeline.Repository, *countingTable, string) {
	t.Helper()
	sq, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	tb := &countingTable{Table: sq}
	repo := pipeline.NewRepository(tb, pipeline.WithClock(clock))
	ctx := t.Context()
	doc := pipeline.Document{ProjectID: "p", ID: pipeline.NewID(), SHA256: "abc"}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: "p", DocumentID: doc.ID}
	if err := repo.CreateWorkflow(ctx, doc, wf, pipelinefile.Default().Stages); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: doc.ID, WorkflowID: wf.ID}
	if _, err := repo.TransitionSteps(ctx, ref, pipeline.StepChange{Step: pipeline.StepFormatParser, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	return repo, tb, wf.ID
}

// 3,000 pages finished by four workers over 2.5 simulated seconds cost the
// first write (once the step has run FirstProgressAfter), one a second and
// the final one — and the last write holds the whole count.
func TestProgressRecorderBoundsWrites(t *testing.T) {
	t.Parallel()
	var ticks atomic.Int64 // one per page: 3,000 pages in 2.5 s
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return base.Add(time.Duration(ticks.Load()) * 2500 * time.Millisecond / 3000) }
	repo, tb, wfID := parsingWorkflow(t, clock)
	ctx := t.Context()

	before := tb.updates.Load()
	rec := repo.NewProgressRecorder(wfID, pipeline.StepFormatParser, 3000, "pages")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 750 {
				ticks.Add(1)
				rec.Add(ctx, 1)
			}
		})
	}
	wg.Wait()
	rec.Finish(ctx)
	if writes := tb.updates.Load() - before; writes < 2 || writes > 5 {
		t.Errorf("%d progress writes for 3,000 pages in 2.5 s, want the first, one a second and the last", writes)
	}
	p, err := repo.GetProgress(ctx, wfID)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Steps[pipeline.StepFormatParser].Progress
	if got == nil || got.Done != 3000 || got.Total != 3000 || got.Unit != "pages" {
		t.Errorf("final progress %+v", got)
	}

	// A step of one unit done at once writes no progress: its completion
	// says it all.
	before = tb.updates.Load()
	ticks.Store(0)
	one := repo.NewProgressRecorder(wfID, pipeline.StepOCR, 1, "pages")
	one.Add(ctx, 1)
	one.Finish(ctx)
	if writes := tb.updates.Load() - before; writes != 0 {
		t.Errorf("%d progress writes for a step of one unit done at once, want 0", writes)
	}
	if p, err = repo.GetProgress(ctx, wfID); err != nil {
		t.Fatal(err)
	}
	if got := p.Steps[pipeline.StepOCR].Progress; got != nil {
		t.Errorf("one-unit progress %+v, want none", got)
	}
}

// A step whose units stall before the first write is due still shows its
// count once FirstProgressAfter has passed, and Finish then records the
// final count.
func TestProgressRecorderWritesAStalledStep(t *testing.T) {
	t.Parallel()
	repo, _, wfID := parsingWorkflow(t, time.Now)
	ctx := t.Context()
	stored := func() *pipeline.StepRunProgress {
		t.Helper()
		p, err := repo.GetProgress(ctx, wfID)
		if err != nil {
			t.Fatal(err)
		}
		return p.Steps[pipeline.StepFormatParser].Progress
	}
	rec := repo.NewProgressRecorder(wfID, pipeline.StepFormatParser, 3, "pages")
	rec.Add(ctx, 1)
	for deadline := time.Now().Add(time.Minute); stored() == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no progress recorded for a stalled step")
		}
	}
	if got := stored(); got.Done != 1 || got.Total != 3 {
		t.Errorf("stalled progress %+v, want 1/3", got)
	}
	rec.Add(ctx, 2)
	rec.Finish(ctx)
	if got := stored(); got.Done != 3 || got.Total != 3 {
		t.Errorf("final progress %+v, want 3/3", got)
	}
}

// Set takes a count and a total from outside, revised as the step learns
// more, within the same bound on writes.
func TestProgressRecorderSet(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	repo, tb, wfID := parsingWorkflow(t, func() time.Time { return base.Add(time.Duration(now.Load())) })
	ctx := t.Context()
	stored := func() pipeline.StepRunProgress {
		t.Helper()
		p, err := repo.GetProgress(ctx, wfID)
		if err != nil || p.Steps[pipeline.StepFormatParser].Progress == nil {
			t.Fatalf("progress: %+v, %v", p, err)
		}
		return *p.Steps[pipeline.StepFormatParser].Progress
	}

	before := tb.updates.Load()
	rec := repo.NewProgressRecorder(wfID, pipeline.StepFormatParser, 0, "rows")
	rec.Set(ctx, 1, 10)
	if writes := tb.updates.Load() - before; writes != 0 {
		t.Errorf("a Set as the step began was written")
	}
	now.Store(int64(pipeline.FirstProgressAfter))
	rec.Set(ctx, 5, 12)
	if got := stored(); got.Done != 5 || got.Total != 12 || got.Unit != "rows" {
		t.Errorf("after FirstProgressAfter: %+v", got)
	}
	now.Store(int64(pipeline.FirstProgressAfter + 300*time.Millisecond))
	rec.Set(ctx, 6, 12)
	if got := stored(); got.Done != 5 {
		t.Errorf("a Set within the interval was written: %+v", got)
	}
	now.Store(int64(pipeline.FirstProgressAfter + 1200*time.Millisecond))
	rec.Set(ctx, 7, 13)
	if got := stored(); got.Done != 7 || got.Total != 13 {
		t.Errorf("after a second: %+v", got)
	}
	if writes := tb.updates.Load() - before; writes != 2 {
		t.Errorf("%d writes for four reports within 1.4 s, want 2", writes)
	}
}
