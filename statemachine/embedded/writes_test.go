package embedded_test

import (
	"context"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/table"
)

// On the embedded engine every step costs one table write: its start (or
// its skip). A completion rides on the next step's start, and the last one
// on the workflow's outcome, so writes carrying step transitions number the
// steps plus the outcome.
func TestOneTableWritePerStep(t *testing.T) {
	t.Parallel()
	log := &txLog{}
	b := setupWrapped(t, func(s blob.Store) blob.Store { return s }, func(tb table.Table) table.Table { log.Table = tb; return log })
	ctx := context.Background()
	doc := strings.Repeat("A page of text about Hamburg and its harbour.\n", 40)
	r, err := b.ingester.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: "a.txt", FileURI: "a.txt", Body: strings.NewReader(doc)})
	if err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	log.txs = nil
	log.mu.Unlock()
	if err := b.engine.Run(ctx, b.ingester.Definition, 0, b.ingester.ExecutionInput(r)); err != nil {
		t.Fatal(err)
	}
	prog, err := b.repo.GetProgress(ctx, r.Workflow.ID)
	if err != nil || prog.Status != pipeline.WorkflowCompleted {
		t.Fatalf("workflow %s (%v)", prog.Status, err)
	}

	steps, stepWrites := 0, 0
	var lines []string
	for _, tx := range log.txs {
		trs := transitionsOf(tx)
		if len(trs) == 0 {
			continue
		}
		stepWrites++
		lines = append(lines, strings.Join(trs, " + "))
		for _, tr := range trs {
			if strings.HasSuffix(tr, ">"+string(pipeline.StepInProgress)) || strings.HasSuffix(tr, ">"+string(pipeline.StepSkipped)) {
				steps++
			}
		}
	}
	t.Logf("%d table writes in all, %d with step transitions, for %d steps:\n%s", len(log.txs), stepWrites, steps, strings.Join(lines, "\n"))
	if steps != len(b.ingester.Definition.Stages) {
		t.Errorf("%d steps started or skipped, want the pipeline's %d", steps, len(b.ingester.Definition.Stages))
	}
	if want := steps + 1; stepWrites != want {
		t.Errorf("%d writes recorded step transitions, want %d: one per step and the outcome", stepWrites, want)
	}
}
