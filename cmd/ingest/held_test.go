package main

import (
	"strings"
	"testing"

	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
)

// A project at its max_concurrent_workflows holds a new document's
// workflow pending, registered but not started, and the event counts as
// handled; a redelivery holds it again.
func TestIngestHoldsWhenProjectFull(t *testing.T) {
	t.Parallel()
	h, ex, repo := setup(t)
	ctx := t.Context()
	if err := h.Ingest.Ingester.EnsureProject(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.UpdateProject(ctx, "default", func(p *pipeline.Project) error {
		p.Settings.MaxConcurrentWorkflows = 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	run := func(key string) s3ingest.Result {
		t.Helper()
		if err := h.Ingest.Ingester.Blobs.Put(ctx, key, strings.NewReader(key)); err != nil {
			t.Fatal(err)
		}
		r, err := h.Ingest.Run(ctx, s3ingest.Object{Bucket: "docs", Key: key, ETag: key, LastModified: lastModified})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := run("incoming/a.pdf")
	if first.Held || first.ExecutionID == "" {
		t.Fatalf("first document: %+v", first)
	}
	for range 2 {
		second := run("incoming/b.pdf")
		id := second.Registration.Workflow.ID
		if !second.Held || second.ExecutionID != "" || ex.starts[id] != 0 {
			t.Fatalf("second document: held %v, execution %q, %d starts", second.Held, second.ExecutionID, ex.starts[id])
		}
		if p, err := repo.GetProgress(ctx, id); err != nil || p.Status != pipeline.WorkflowPending {
			t.Fatalf("held workflow %s, %v", p.Status, err)
		}
	}
	if p, err := repo.GetProgress(ctx, first.Registration.Workflow.ID); err != nil || p.Status != pipeline.WorkflowInProgress {
		t.Fatalf("admitted workflow %s, %v", p.Status, err)
	}
	if s, err := repo.GetProjectSlots(ctx, "default"); err != nil || s.Running != 1 {
		t.Fatalf("running count %d, %v", s.Running, err)
	}
}
