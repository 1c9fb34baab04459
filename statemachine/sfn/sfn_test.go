package sfn

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

const smARN = "arn:aws:states:us-east-1:123456789012:stateMachine:docpipe"

// fakeExec is an in-memory Step Functions execution API.
type fakeExec struct {
	mu     sync.Mutex
	execs  map[string]*awssfn.DescribeExecutionOutput
	starts int
}

func (f *fakeExec) StartExecution(_ context.Context, in *awssfn.StartExecutionInput, _ ...func(*awssfn.Options)) (*awssfn.StartExecutionOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
	arn, _ := ExecutionARN(*in.StateMachineArn, *in.Name)
	if ex, ok := f.execs[arn]; ok {
		if ex.Status == types.ExecutionStatusRunning && aws.ToString(ex.Input) == aws.ToString(in.Input) {
			return &awssfn.StartExecutionOutput{ExecutionArn: aws.String(arn)}, nil
		}
		return nil, &types.ExecutionAlreadyExists{Message: aws.String("exists")}
	}
	if f.execs == nil {
		f.execs = map[string]*awssfn.DescribeExecutionOutput{}
	}
	f.execs[arn] = &awssfn.DescribeExecutionOutput{ExecutionArn: aws.String(arn), Name: in.Name, Input: in.Input, Status: types.ExecutionStatusRunning}
	return &awssfn.StartExecutionOutput{ExecutionArn: aws.String(arn)}, nil
}

func (f *fakeExec) DescribeExecution(_ context.Context, in *awssfn.DescribeExecutionInput, _ ...func(*awssfn.Options)) (*awssfn.DescribeExecutionOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ex, ok := f.execs[*in.ExecutionArn]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{Message: aws.String("no")}
	}
	c := *ex
	return &c, nil
}

func (f *fakeExec) StopExecution(_ context.Context, in *awssfn.StopExecutionInput, _ ...func(*awssfn.Options)) (*awssfn.StopExecutionOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ex, ok := f.execs[*in.ExecutionArn]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{Message: aws.String("no")}
	}
	ex.Status, ex.Error, ex.Cause = types.ExecutionStatusAborted, in.Error, in.Cause
	return &awssfn.StopExecutionOutput{}, nil
}

func (f *fakeExec) end(arn string, st types.ExecutionStatus, errName, cause string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ex := f.execs[arn]
	ex.Status, ex.Error, ex.Cause = st, aws.String(errName), aws.String(cause)
}

type bundle struct {
	repo *pipeline.Repository
	ig   *pipeline.Ingester
	api  *fakeExec
	ex   *Executor
}

func setup(t *testing.T) bundle {
	t.Helper()
	tbl, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	repo := pipeline.NewRepository(tbl)
	ig := &pipeline.Ingester{Repo: repo, Definition: pipelinefile.Default(), Bucket: "b"}
	if err := ig.EnsureProject(t.Context(), "p", "p"); err != nil {
		t.Fatal(err)
	}
	api := &fakeExec{}
	return bundle{repo: repo, ig: ig, api: api, ex: &Executor{API: api, StateMachineARN: smARN, Repo: repo}}
}

// register creates a workflow for an upload under incoming/.
func (b bundle) register(t *testing.T) pipeline.Registration {
	t.Helper()
	blobs, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(t.Context(), blobs, "incoming/a.txt", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	b.ig.Blobs = blobs
	reg, err := b.ig.Register(t.Context(), pipeline.IngestRequest{ProjectID: "p", FileName: "a.txt", BlobKey: "incoming/a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestExecutionARN(t *testing.T) {
	t.Parallel()
	got, err := ExecutionARN(smARN, "01ABC")
	if err != nil || got != "arn:aws:states:us-east-1:123456789012:execution:docpipe:01ABC" {
		t.Fatalf("ExecutionARN = %q, %v", got, err)
	}
	for _, bad := range []string{"", "arn:aws:states:us-east-1:1:activity:x", "not-an-arn"} {
		if _, err := ExecutionARN(bad, "x"); err == nil {
			t.Errorf("ExecutionARN(%q) succeeded", bad)
		}
	}
	if _, err := ExecutionName("has space"); err == nil {
		t.Error("ExecutionName accepted a space")
	}
	p, err := ActivityARNPrefix(smARN, "docpipe-")
	if err != nil || p != "arn:aws:states:us-east-1:123456789012:activity:docpipe-" {
		t.Fatalf("ActivityARNPrefix = %q, %v", p, err)
	}
}

func TestStartIsIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := b.register(t)
	in := b.ig.ExecutionInput(reg)
	first, err := b.ex.Start(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.ex.Start(t.Context(), in)
	if err != nil || second != first {
		t.Fatalf("second Start = %q, %v; want %q", second, err, first)
	}
	b.api.end(first, types.ExecutionStatusSucceeded, "", "")
	third, err := b.ex.Start(t.Context(), in) // ExecutionAlreadyExists
	if err != nil || third != first {
		t.Fatalf("Start after the end = %q, %v; want %q", third, err, first)
	}
	if len(b.api.execs) != 1 {
		t.Fatalf("%d executions, want 1", len(b.api.execs))
	}
	wf, err := b.repo.GetWorkflow(t.Context(), reg.Document.ID, reg.Workflow.ID)
	if err != nil || wf.ExecutionID != first {
		t.Fatalf("workflow execution id = %q, %v; want %q", wf.ExecutionID, err, first)
	}
}

func TestReconcilerStatusChange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := b.register(t)
	ref := reg.Ref()
	ctx := t.Context()
	if _, err := b.repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.repo.TransitionSteps(ctx, ref, pipeline.StepChange{Step: pipeline.StepSegmentPrep, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{API: b.api, Repo: b.repo, StateMachineARN: smARN}
	input, _ := json.Marshal(b.ig.ExecutionInput(reg))
	ev := StatusChange{Status: "RUNNING", Input: aws.String(string(input))}
	if out, err := r.HandleStatusChange(ctx, ev); err != nil || out != OutcomeIgnored {
		t.Fatalf("running: %v, %v", out, err)
	}
	ev.Status, ev.Error, ev.Cause = "TIMED_OUT", aws.String("States.Timeout"), aws.String("took too long")
	out, err := r.HandleStatusChange(ctx, ev)
	if err != nil || out != OutcomeMarked {
		t.Fatalf("timed out: %v, %v", out, err)
	}
	prog, err := b.repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Status != pipeline.WorkflowFailed || !strings.Contains(prog.Error, "timed out") {
		t.Errorf("workflow %s %q", prog.Status, prog.Error)
	}
	if st := prog.Steps[pipeline.StepSegmentPrep]; st.Status != pipeline.StepFailed {
		t.Errorf("segment_prep is %s", st.Status)
	}
	// Redelivered event: nothing more to do. Without input: by name.
	ev.Input, ev.Name = nil, ref.WorkflowID
	if out, err := r.HandleStatusChange(ctx, ev); err != nil || out != OutcomeUpToDate {
		t.Fatalf("again: %v, %v", out, err)
	}
}

func TestReconcileInProgress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	now := time.Now()
	r := &Reconciler{API: b.api, Repo: b.repo, StateMachineARN: smARN, Now: func() time.Time { return now }, Grace: time.Minute}

	aborted := b.register(t)
	arn, err := b.ex.Start(ctx, b.ig.ExecutionInput(aborted))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ex.Stop(ctx, arn, "Operator", "stopped by hand"); err != nil {
		t.Fatal(err)
	}
	running := b.register(t)
	if _, err := b.ex.Start(ctx, b.ig.ExecutionInput(running)); err != nil {
		t.Fatal(err)
	}
	neverStarted := b.register(t)

	rep, err := r.ReconcileInProgress(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep[OutcomeMarked] != 1 || rep[OutcomeIgnored] != 2 {
		t.Fatalf("report %v", rep)
	}
	now = now.Add(2 * time.Minute) // past the grace of the never started one
	if rep, err = r.ReconcileInProgress(ctx); err != nil || rep[OutcomeNotStarted] != 1 || rep[OutcomeIgnored] != 1 {
		t.Fatalf("report %v, %v", rep, err)
	}
	for reg, want := range map[string]pipeline.WorkflowStatus{aborted.Workflow.ID: pipeline.WorkflowFailed, running.Workflow.ID: pipeline.WorkflowPending, neverStarted.Workflow.ID: pipeline.WorkflowFailed} {
		p, err := b.repo.GetProgress(ctx, reg)
		if err != nil || p.Status != want {
			t.Errorf("%s: %s, %v; want %s", reg, p.Status, err, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("é", 200) // 400 bytes
	got := truncate(s, maxErrorLen)
	if len(got) > maxErrorLen || !strings.HasSuffix(got, "…") || !json.Valid([]byte(`"`+got+`"`)) {
		t.Fatalf("truncate: %d bytes %q", len(got), got)
	}
	if truncate("short", 10) != "short" {
		t.Fatal("truncated a short string")
	}
}

// A late failure event of an execution a re-run replaced does not fail the
// re-run.
func TestReconcilerIgnoresSupersededExecution(t *testing.T) {
	t.Parallel()
	b := setup(t)
	reg := b.register(t)
	ref := reg.Ref()
	ctx := t.Context()
	if _, err := b.repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, ""); err != nil {
		t.Fatal(err)
	}
	current := "arn:aws:states:us-east-1:123456789012:execution:docpipe:" + ref.WorkflowID + "-rerun-1"
	if err := b.repo.UpdateWorkflowInfo(ctx, ref, pipeline.WorkflowInfo{ExecutionID: &current}); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{API: b.api, Repo: b.repo, StateMachineARN: smARN}
	ev := StatusChange{Status: "FAILED", Name: ref.WorkflowID, ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:docpipe:" + ref.WorkflowID}
	if out, err := r.HandleStatusChange(ctx, ev); err != nil || out != OutcomeIgnored {
		t.Fatalf("superseded: %v, %v", out, err)
	}
	if prog, _ := b.repo.GetProgress(ctx, ref.WorkflowID); prog.Status != pipeline.WorkflowInProgress {
		t.Errorf("workflow is %s, want still in progress", prog.Status)
	}
	ev.ExecutionARN, ev.Name = current, ref.WorkflowID+"-rerun-1"
	if out, err := r.HandleStatusChange(ctx, ev); err != nil || out != OutcomeMarked {
		t.Fatalf("current: %v, %v", out, err)
	}
}
