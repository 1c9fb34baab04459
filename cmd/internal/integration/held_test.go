//go:build integration

package integration

import (
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// A project limited to one running workflow: the second document is
// registered and held pending with no execution; once the first completes,
// the reconciler's sweep starts it on the state machine, and a repeated
// sweep starts nothing more.
func TestHeldWorkflowStartsWhenSlotFrees(t *testing.T) {
	t.Parallel()
	d := deploy(t, deployOptions{})
	ctx := t.Context()
	if err := d.Ingest.Ingester.EnsureProject(ctx, project, project); err != nil {
		t.Fatal(err)
	}
	if _, err := d.B.Repo.UpdateProject(ctx, project, func(p *pipeline.Project) error {
		p.Settings.MaxConcurrentWorkflows = 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	first := d.upload(t, filepath.Join(samplesDir, "letter.txt"))
	second := d.uploadBytes(t, "second.txt", []byte("A second document, held while the first one runs.\n"))
	if first.Held || first.ExecutionID == "" {
		t.Fatalf("first document: %+v", first)
	}
	if !second.Held || second.ExecutionID != "" {
		t.Fatalf("second document not held: %+v", second)
	}
	heldID := second.Registration.Workflow.ID
	if ex := d.wait(t, first.ExecutionID); ex.Status != "SUCCEEDED" {
		t.Fatalf("first execution %s %s %s", ex.Status, ex.Error, ex.Cause)
	}
	if p, err := d.B.Repo.GetProgress(ctx, heldID); err != nil || p.Status != pipeline.WorkflowPending {
		t.Fatalf("held workflow %s, %v", p.Status, err)
	}

	r := &sfn.Reconciler{API: d.SFN, Repo: d.B.Repo, StateMachineARN: d.StateMachineARN, Bucket: d.Bucket}
	rep, err := r.ReconcileInProgress(ctx)
	if err != nil || rep[sfn.OutcomeStarted] != 1 {
		t.Fatalf("sweep: %v, %v", rep, err)
	}
	wf, err := d.B.Repo.GetWorkflow(ctx, second.Registration.Document.ID, heldID)
	if err != nil || wf.ExecutionID == "" {
		t.Fatalf("held workflow's execution %q, %v", wf.ExecutionID, err)
	}
	if rep, err := r.ReconcileInProgress(ctx); err != nil || rep[sfn.OutcomeStarted] != 0 {
		t.Fatalf("repeated sweep: %v, %v", rep, err)
	}
	if ex := d.wait(t, wf.ExecutionID); ex.Status != "SUCCEEDED" {
		t.Fatalf("held execution %s %s %s", ex.Status, ex.Error, ex.Cause)
	}
	if p, err := d.B.Repo.GetProgress(ctx, heldID); err != nil || p.Status != pipeline.WorkflowCompleted {
		t.Fatalf("held workflow ended %s, %v", p.Status, err)
	}
	if s, err := d.B.Repo.GetProjectSlots(ctx, project); err != nil || s.Running != 0 {
		t.Fatalf("running count %d, %v", s.Running, err)
	}
}
