package steps_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/steps"
	"github.com/docpipe/docpipe/pipeline/table"
)

// segmentQueries counts the range queries over segment items.
type segmentQueries struct {
	table.Table
	mu sync.Mutex
	n  int
}

func (c *segmentQueries) Query(ctx context.Context, q table.Query) (table.Page, error) {
	if strings.HasPrefix(q.SKFrom, "SEG#") || strings.HasPrefix(q.SKPrefix, "SEG#") {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return c.Table.Query(ctx, q)
}

func (c *segmentQueries) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// A batch of the analyzer reads its segment items once: recording their
// outcomes is conditional on the statuses that read found, not on a
// second read of the same items.
func TestSegmentBatchReadsItsItemsOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	tbl, err := sqlitetable.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	counted := &segmentQueries{Table: tbl}
	blobs, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := pipeline.NewRepository(counted)
	ig := &pipeline.Ingester{Repo: repo, Blobs: blobs, Definition: pipelinefile.Default(), Bucket: "local"}
	if err := ig.EnsureProject(ctx, "p", "p"); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for i := range 5 {
		fmt.Fprintf(&text, "# Part %d\n\nHamburg signed the lease on 5 March 2024 with Anna Berg.\n\n", i+1)
	}
	reg, err := ig.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: "a.md", FileURI: "upload:a.md", Body: strings.NewReader(text.String())})
	if err != nil {
		t.Fatal(err)
	}
	handlers := pipeline.NewRegistry()
	steps.Register(handlers, steps.Deps{Repo: repo, Blobs: blobs, TempDir: t.TempDir(), Parallelism: 2})
	invoke := stepInvoker(ctx, handlers, reg.Ref())
	for _, step := range pipeline.IngestionStages {
		if _, err := invoke(step); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	var manifest []pipeline.Batch
	if raw, err := blob.GetBytes(ctx, blobs, pipeline.ManifestBlobKey(reg.Ref()), 1<<20); err != nil || json.Unmarshal(raw, &manifest) != nil || len(manifest) == 0 {
		t.Fatalf("manifest %s: %v", raw, err)
	}
	before := counted.count()
	payload, _ := json.Marshal(pipeline.StepInput{Step: pipeline.StepSegmentAnalyzer, Workflow: reg.Ref(), Batch: &manifest[0]})
	if _, err := handlers.Invoke(ctx, payload); err != nil {
		t.Fatal(err)
	}
	if n := counted.count() - before; n != 1 {
		t.Errorf("the batch read its segment items %d times, want once", n)
	}
	prog, err := repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := manifest[0].To - manifest[0].From + 1; want < 2 || prog.SegmentsDone != want {
		t.Errorf("%d segments done, want %d", prog.SegmentsDone, want)
	}
}
