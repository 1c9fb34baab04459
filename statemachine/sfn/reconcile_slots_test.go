package sfn

import (
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// The reconciler sets a project's running count from its workflows in
// progress: a count left too high by a worker that died no longer keeps
// the project's workflows out, and one marked failed gives its slot back.
func TestReconcileRecountsRunning(t *testing.T) {
	t.Parallel()
	tbl, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	b := setup(t)
	b.repo = pipeline.NewRepository(tbl)
	b.ig.Repo = b.repo
	b.ex.Repo = b.repo
	ctx := t.Context()
	if err := b.ig.EnsureProject(ctx, "p", "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.repo.UpdateProject(ctx, "p", func(p *pipeline.Project) error {
		p.Settings.MaxConcurrentWorkflows = 2
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var regs []pipeline.Registration
	for range 3 {
		regs = append(regs, b.register(t))
	}
	running := regs[0]
	if _, err := b.ex.Start(ctx, b.ig.ExecutionInput(running)); err != nil {
		t.Fatal(err)
	}
	if err := b.repo.AdmitWorkflow(ctx, running.Ref()); err != nil {
		t.Fatal(err)
	}
	aborted := regs[1]
	arn, err := b.ex.Start(ctx, b.ig.ExecutionInput(aborted))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.repo.AdmitWorkflow(ctx, aborted.Ref()); err != nil {
		t.Fatal(err)
	}
	if err := b.ex.Stop(ctx, arn, "Operator", "stopped by hand"); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Update(ctx, pipeline.ProjectSlotsKey("p"), []table.Update{table.Set{Path: "running", Value: 7}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.repo.AdmitWorkflow(ctx, regs[2].Ref()); err == nil {
		t.Fatal("admitted over a leaked count")
	}

	r := &Reconciler{API: b.api, Repo: b.repo, StateMachineARN: smARN}
	// The recount frees the slot the leak held: the workflow kept out is
	// admitted and started in it.
	if rep, err := r.ReconcileInProgress(ctx); err != nil || rep[OutcomeMarked] != 1 || rep[OutcomeStarted] != 1 {
		t.Fatalf("report %v, %v", rep, err)
	}
	s, err := b.repo.GetProjectSlots(ctx, "p")
	if err != nil || s.Running != 2 {
		t.Fatalf("running count %d, %v; want the workflow in progress and the one started", s.Running, err)
	}
	if p, err := b.repo.GetProgress(ctx, regs[2].Workflow.ID); err != nil || p.Status != pipeline.WorkflowInProgress {
		t.Fatalf("workflow kept out: %s, %v", p.Status, err)
	}
}
