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

// 3,000 pages finished by four workers over 2.5 simulated seconds cost the
// first write, one a second and the final one — and the last write holds
// the whole count.
func TestProgressRecorderBoundsWrites(t *testing.T) {
	t.Parallel()
	sq, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	tb := &countingTable{Table: sq}
	var ticks atomic.Int64 // one per page: 3,000 pages in 2.5 s
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return base.Add(time.Duration(ticks.Load()) * 2500 * time.Millisecond / 3000) }
	repo := pipeline.NewRepository(tb, pipeline.WithClock(clock))
	ctx := t.Context()
	doc := pipeline.Document{ProjectID: "p", ID: pipeline.NewID(), SHA256: "abc"}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: "p", DocumentID: doc.ID}
	if err := repo.CreateWorkflow(ctx, doc, wf, pipelinefile.Default().Stages); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: doc.ID, WorkflowID: wf.ID}
	if _, err := repo.TransitionStep(ctx, ref, pipeline.StepFormatParser, []pipeline.StepStatus{pipeline.StepPending}, pipeline.StepInProgress, ""); err != nil {
		t.Fatal(err)
	}

	before := tb.updates.Load()
	rec := repo.NewProgressRecorder(wf.ID, pipeline.StepFormatParser, 3000, "pages")
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
	p, err := repo.GetProgress(ctx, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Steps[pipeline.StepFormatParser].Progress
	if got == nil || got.Done != 3000 || got.Total != 3000 || got.Unit != "pages" {
		t.Errorf("final progress %+v", got)
	}

	// A step of one unit: its first write already holds the final count,
	// so Finish has nothing to add.
	before = tb.updates.Load()
	one := repo.NewProgressRecorder(wf.ID, pipeline.StepFormatParser, 1, "sections")
	one.Add(ctx, 1)
	one.Finish(ctx)
	if writes := tb.updates.Load() - before; writes != 1 {
		t.Errorf("%d progress writes for a step of one unit, want 1", writes)
	}
	if p, err = repo.GetProgress(ctx, wf.ID); err != nil {
		t.Fatal(err)
	}
	if got := p.Steps[pipeline.StepFormatParser].Progress; got == nil || got.Done != 1 || got.Total != 1 || got.Unit != "sections" {
		t.Errorf("one-unit progress %+v", got)
	}
}

// Set takes a count and a total from outside, revised as the step learns
// more, within the same bound on writes.
func TestProgressRecorderSet(t *testing.T) {
	t.Parallel()
	sq, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	tb := &countingTable{Table: sq}
	var now atomic.Int64
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	repo := pipeline.NewRepository(tb, pipeline.WithClock(func() time.Time { return base.Add(time.Duration(now.Load())) }))
	ctx := t.Context()
	doc := pipeline.Document{ProjectID: "p", ID: pipeline.NewID(), SHA256: "abc"}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: "p", DocumentID: doc.ID}
	if err := repo.CreateWorkflow(ctx, doc, wf, pipelinefile.Default().Stages); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: doc.ID, WorkflowID: wf.ID}
	if _, err := repo.TransitionStep(ctx, ref, pipeline.StepFormatParser, []pipeline.StepStatus{pipeline.StepPending}, pipeline.StepInProgress, ""); err != nil {
		t.Fatal(err)
	}
	stored := func() pipeline.StepRunProgress {
		t.Helper()
		p, err := repo.GetProgress(ctx, wf.ID)
		if err != nil || p.Steps[pipeline.StepFormatParser].Progress == nil {
			t.Fatalf("progress: %+v, %v", p, err)
		}
		return *p.Steps[pipeline.StepFormatParser].Progress
	}

	before := tb.updates.Load()
	rec := repo.NewProgressRecorder(wf.ID, pipeline.StepFormatParser, 0, "rows")
	rec.Set(ctx, 1, 10)
	if got := stored(); got.Done != 1 || got.Total != 10 || got.Unit != "rows" {
		t.Errorf("after the first Set: %+v", got)
	}
	now.Store(int64(300 * time.Millisecond))
	rec.Set(ctx, 5, 12)
	if got := stored(); got.Done != 1 {
		t.Errorf("a Set within the interval was written: %+v", got)
	}
	now.Store(int64(1200 * time.Millisecond))
	rec.Set(ctx, 6, 12)
	if got := stored(); got.Done != 6 || got.Total != 12 {
		t.Errorf("after a second: %+v", got)
	}
	if writes := tb.updates.Load() - before; writes != 2 {
		t.Errorf("%d writes for three reports within 1.2 s, want 2", writes)
	}
}
