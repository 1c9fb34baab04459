package sfn

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/docpipe/docpipe/pipeline"
)

// limit sets the project's max_concurrent_workflows.
func (b bundle) limit(t *testing.T, n int) {
	t.Helper()
	if _, err := b.repo.UpdateProject(t.Context(), "p", func(p *pipeline.Project) error {
		p.Settings.MaxConcurrentWorkflows = n
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A workflow held pending by a full project is neither failed as never
// started nor started while the project is full; the sweep after a slot
// frees starts it once, and a repeated sweep starts nothing more.
func TestReconcileStartsHeldWorkflows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.limit(t, 1)
	ctx := t.Context()
	running, held := b.register(t), b.register(t)
	if err := b.repo.AdmitWorkflow(ctx, running.Ref()); err != nil {
		t.Fatal(err)
	}
	first, err := b.ex.Start(ctx, b.ig.ExecutionInput(running))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.repo.AdmitWorkflow(ctx, held.Ref()); err == nil {
		t.Fatal("admitted over the limit")
	}
	r := &Reconciler{API: b.api, Repo: b.repo, StateMachineARN: smARN, Bucket: b.ig.Bucket, Grace: time.Nanosecond,
		Now: func() time.Time { return time.Now().Add(time.Hour) }}

	rep, err := r.ReconcileInProgress(ctx)
	if err != nil || rep[OutcomeHeld] != 1 || rep[OutcomeNotStarted] != 0 || rep[OutcomeStarted] != 0 {
		t.Fatalf("sweep while full: %v, %v", rep, err)
	}
	if got := status(t, b, held); got != pipeline.WorkflowPending {
		t.Fatalf("held workflow %s, want pending", got)
	}

	b.api.end(first, types.ExecutionStatusSucceeded, "", "")
	if _, err := b.repo.SetWorkflowStatus(ctx, running.Ref(), []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowCompleted, ""); err != nil {
		t.Fatal(err)
	}
	if rep, err := r.ReconcileInProgress(ctx); err != nil || rep[OutcomeStarted] != 1 {
		t.Fatalf("sweep with a free slot: %v, %v", rep, err)
	}
	if got := status(t, b, held); got != pipeline.WorkflowInProgress {
		t.Fatalf("started workflow %s, want in_progress", got)
	}
	want, _ := ExecutionARN(smARN, held.Workflow.ID)
	wf, err := b.repo.GetWorkflow(ctx, held.Document.ID, held.Workflow.ID)
	if err != nil || wf.ExecutionID != want {
		t.Fatalf("execution %q, %v; want %q", wf.ExecutionID, err, want)
	}
	ex, err := b.ex.Describe(ctx, want)
	if err != nil || ex.Input == "" || ex.Status != types.ExecutionStatusRunning {
		t.Fatalf("execution %+v, %v", ex, err)
	}

	starts := b.api.starts
	if rep, err := r.ReconcileInProgress(ctx); err != nil || rep[OutcomeStarted] != 0 {
		t.Fatalf("repeated sweep: %v, %v", rep, err)
	}
	if b.api.starts != starts || len(b.api.execs) != 2 {
		t.Fatalf("repeated sweep called StartExecution %d times more, %d executions", b.api.starts-starts, len(b.api.execs))
	}
	if s, err := b.repo.GetProjectSlots(ctx, "p"); err != nil || s.Running != 1 {
		t.Fatalf("running count %d, %v", s.Running, err)
	}
}

// A failed execution's status change frees its slot for a held workflow
// at once, without waiting for the periodic sweep.
func TestStatusChangeStartsHeldWorkflow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.limit(t, 1)
	ctx := t.Context()
	running, held := b.register(t), b.register(t)
	if err := b.repo.AdmitWorkflow(ctx, running.Ref()); err != nil {
		t.Fatal(err)
	}
	first, err := b.ex.Start(ctx, b.ig.ExecutionInput(running))
	if err != nil {
		t.Fatal(err)
	}
	b.api.end(first, types.ExecutionStatusAborted, "Operator", "")
	r := &Reconciler{API: b.api, Repo: b.repo, StateMachineARN: smARN, Bucket: b.ig.Bucket}
	out, err := r.HandleStatusChange(ctx, StatusChange{ExecutionARN: first, Name: running.Workflow.ID, Status: "ABORTED", Error: aws.String("Operator")})
	if err != nil || out != OutcomeMarked {
		t.Fatalf("outcome %v, %v", out, err)
	}
	if got := status(t, b, held); got != pipeline.WorkflowInProgress {
		t.Fatalf("held workflow %s after the slot freed, want in_progress", got)
	}
	want, _ := ExecutionARN(smARN, held.Workflow.ID)
	if _, err := b.ex.Describe(ctx, want); err != nil {
		t.Fatal(err)
	}
}

// A workflow admitted whose start was lost (ingest died between the two)
// is started by the sweep, not left in progress without an execution.
func TestReconcileStartsAdmittedWithoutExecution(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.limit(t, 1)
	ctx := t.Context()
	reg := b.register(t)
	if err := b.repo.AdmitWorkflow(ctx, reg.Ref()); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{API: b.api, Repo: b.repo, StateMachineARN: smARN, Bucket: b.ig.Bucket}
	if rep, err := r.ReconcileInProgress(ctx); err != nil || rep[OutcomeStarted] != 1 {
		t.Fatalf("report %v, %v", rep, err)
	}
	want, _ := ExecutionARN(smARN, reg.Workflow.ID)
	if _, err := b.ex.Describe(ctx, want); err != nil {
		t.Fatal(err)
	}
}

func status(t *testing.T, b bundle, reg pipeline.Registration) pipeline.WorkflowStatus {
	t.Helper()
	p, err := b.repo.GetProgress(t.Context(), reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	return p.Status
}
