package sfn

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/docpipe/docpipe/pipeline"
)

func TestStartRerun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := b.register(t)
	ctx := t.Context()
	in := b.ig.ExecutionInput(reg)
	first, err := b.ex.Start(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	b.api.end(first, types.ExecutionStatusFailed, "WorkflowFailed", "")
	rerun, err := b.ex.StartRerun(ctx, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ExecutionARN(smARN, reg.Workflow.ID+"-rerun-1")
	if rerun != want {
		t.Fatalf("re-run execution %q, want %q", rerun, want)
	}
	if again, err := b.ex.StartRerun(ctx, in, 1); err != nil || again != rerun || len(b.api.execs) != 2 {
		t.Fatalf("second start of the re-run: %q, %v, %d executions", again, err, len(b.api.execs))
	}
	wf, err := b.repo.GetWorkflow(ctx, reg.Document.ID, reg.Workflow.ID)
	if err != nil || wf.ExecutionID != rerun {
		t.Fatalf("workflow records execution %q, %v; want the re-run", wf.ExecutionID, err)
	}
	if _, err := b.ex.StartRerun(ctx, in, 0); err == nil {
		t.Error("attempt 0 started")
	}
	if got := WorkflowOfExecution(reg.Workflow.ID + "-rerun-12"); got != reg.Workflow.ID {
		t.Errorf("WorkflowOfExecution = %q", got)
	}
	if got := WorkflowOfExecution("a-rerun-x"); got != "a-rerun-x" {
		t.Errorf("WorkflowOfExecution(a-rerun-x) = %q", got)
	}
}

// A status change event without input finds the workflow of a re-run by
// its execution name.
func TestReconcilerRerunByName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := b.register(t)
	ctx := t.Context()
	r := &Reconciler{API: b.api, Repo: b.repo, StateMachineARN: smARN}
	name, _ := RerunExecutionName(reg.Workflow.ID, 2)
	out, err := r.HandleStatusChange(ctx, StatusChange{Name: name, Status: "ABORTED", Error: aws.String("Operator")})
	if err != nil || out != OutcomeMarked {
		t.Fatalf("outcome %v, %v", out, err)
	}
	if p, err := b.repo.GetProgress(ctx, reg.Workflow.ID); err != nil || p.Status != pipeline.WorkflowFailed {
		t.Fatalf("workflow %s, %v", p.Status, err)
	}
}

func TestNextRerunAttempt(t *testing.T) {
	for arn, want := range map[string]int{
		"": 1,
		"arn:aws:states:us-east-1:123456789012:execution:sm:01ABC":         1,
		"arn:aws:states:us-east-1:123456789012:execution:sm:01ABC-rerun-1": 2,
		"arn:aws:states:us-east-1:123456789012:execution:sm:01ABC-rerun-9": 10,
		"arn:aws:states:us-east-1:123456789012:execution:sm:01ABC-rerun-x": 1,
	} {
		if got := NextRerunAttempt(arn); got != want {
			t.Errorf("NextRerunAttempt(%q) = %d, want %d", arn, got, want)
		}
	}
}
