//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// An empty file fails its workflow, with the reason recorded, and the
// status index lists it as failed.
func TestFailingDocument(t *testing.T) {
	t.Parallel()
	d := deploy(t, deployOptions{})
	res := d.uploadBytes(t, "empty.txt", nil)
	ex := d.wait(t, res.ExecutionID)
	if ex.Status != "FAILED" {
		t.Fatalf("execution %s, want FAILED", ex.Status)
	}
	ctx := t.Context()
	prog, err := d.B.Repo.GetProgress(ctx, res.Registration.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("workflow failed with %q; execution error %q", prog.Error, ex.Error)
	if prog.Status != pipeline.WorkflowFailed || prog.Error == "" {
		t.Errorf("workflow %s with reason %q, want failed with a reason", prog.Status, prog.Error)
	}
	if st := prog.Steps[pipeline.StepSegmentPrep]; st.Status != pipeline.StepFailed {
		t.Errorf("segment_prep is %s", st.Status)
	}
	failed, err := d.B.Repo.ListByStatus(ctx, pipeline.WorkflowFailed, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(failed, func(p pipeline.StepProgress) bool { return p.WorkflowID == res.Registration.Workflow.ID }) {
		t.Errorf("failed workflows %v do not include %s", failed, res.Registration.Workflow.ID)
	}
}

// A second S3 event for the same object, before and after its execution
// ends, maps onto the same workflow and starts nothing.
func TestDuplicateS3Event(t *testing.T) {
	t.Parallel()
	d := deploy(t, deployOptions{})
	first := d.upload(t, filepath.Join(samplesDir, "letter.txt"))
	key := "incoming/letter.txt"
	second := d.ingest(t, key)
	if !second.Registration.Existing || second.Registration.Workflow.ID != first.Registration.Workflow.ID || second.ExecutionID != first.ExecutionID {
		t.Errorf("second event: %+v; first %+v", second, first)
	}
	if ex := d.wait(t, first.ExecutionID); ex.Status != "SUCCEEDED" {
		t.Fatalf("execution %s %s", ex.Status, ex.Error)
	}
	third := d.ingest(t, key)
	if !third.Registration.Existing || third.Registration.Workflow.ID != first.Registration.Workflow.ID {
		t.Errorf("event after the end: %+v", third)
	}
	out, err := d.SFN.ListExecutions(t.Context(), &awssfn.ListExecutionsInput{StateMachineArn: aws.String(d.StateMachineARN)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Executions) != 1 {
		t.Errorf("%d executions, want 1", len(out.Executions))
	}
	wfs, _, err := d.B.Repo.ListProjectWorkflows(t.Context(), project, 0, "")
	if err != nil || len(wfs) != 1 {
		t.Errorf("%d workflows in the project, %v; want 1", len(wfs), err)
	}
}

// A segment that fails on the first execution is analysed again by a
// re-run execution, and only it.
func TestRerunFailedSegments(t *testing.T) {
	t.Parallel()
	hiding := &hidingStore{suffix: "segments/000002/text.txt"}
	d := deploy(t, deployOptions{wrapBlobs: func(s blob.Store) blob.Store { hiding.Store = s; return hiding }})
	res := d.upload(t, filepath.Join(samplesDir, "notes.md"))
	reg := res.Registration
	if ex := d.wait(t, res.ExecutionID); ex.Status != "SUCCEEDED" {
		t.Fatalf("first execution %s %s", ex.Status, ex.Error)
	}
	ctx := t.Context()
	prog, err := d.B.Repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.SegmentsFailed != 1 || prog.SegmentsDone != prog.TotalSegments-1 {
		t.Fatalf("first run: %d of %d segments done, %d failed; want one failed", prog.SegmentsDone, prog.TotalSegments, prog.SegmentsFailed)
	}
	hiding.show()
	// The user's path: `docpipe rerun` against the deployment.
	cmd := docpipeCommand(ctx, testbin.Docpipe(t), "rerun", "--table", d.Table, "--bucket", d.Bucket, "--state-machine", d.StateMachineARN, reg.Workflow.ID)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docpipe rerun: %v\n%s", err, out)
	}
	arn := strings.TrimSpace(string(out[bytes.LastIndex(out, []byte(" as "))+4:]))
	if want, _ := sfn.RerunExecutionName(reg.Workflow.ID, 1); !strings.HasSuffix(arn, ":"+want) {
		t.Errorf("re-run execution %s, want one named %s", arn, want)
	}
	if ex := d.wait(t, arn); ex.Status != "SUCCEEDED" {
		t.Fatalf("re-run execution %s %s", ex.Status, ex.Error)
	}
	prog, err = d.B.Repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Status != pipeline.WorkflowCompleted || prog.SegmentsFailed != 0 || prog.SegmentsDone != prog.TotalSegments {
		t.Errorf("after the re-run: %s, %d of %d done, %d failed", prog.Status, prog.SegmentsDone, prog.TotalSegments, prog.SegmentsFailed)
	}
	seg, err := d.B.Repo.GetSegment(ctx, reg.Workflow.ID, 2)
	if err != nil || seg.Status != pipeline.SegmentDone {
		t.Errorf("segment 2: %+v, %v", seg, err)
	}
}

// statusJSON runs `docpipe status --json` against the deployment.
func (d *deployment) statusJSON(t *testing.T, bin string, args ...string) []pipeline.StepProgress {
	t.Helper()
	cmd := docpipeCommand(t.Context(), bin, append([]string{"status", "--json", "--table", d.Table, "--bucket", d.Bucket}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docpipe status %v: %v\n%s", args, err, stderr.String())
	}
	var list []pipeline.StepProgress
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("docpipe status output %q: %v", out, err)
	}
	return list
}

func statusOf(list []pipeline.StepProgress, workflowID string) pipeline.WorkflowStatus {
	for _, p := range list {
		if p.WorkflowID == workflowID {
			return p.Status
		}
	}
	return ""
}

// `docpipe status` shows a workflow in progress while its execution runs;
// when the execution is stopped, the reconciler marks it failed, and the
// status shows that: the table never says "in progress" forever.
func TestStatusWhileRunningAndAfterStop(t *testing.T) {
	t.Parallel()
	hold := newHoldStep(pipeline.StepFormatParser)
	d := deploy(t, deployOptions{wrapHandler: hold.wrap})
	bin := testbin.Docpipe(t)
	defer close(hold.release) // the worker's late report then finds the task gone
	res := d.upload(t, filepath.Join(samplesDir, "letter.txt"))
	id := res.Registration.Workflow.ID
	select {
	case <-hold.entered:
	case <-time.After(time.Minute):
		t.Fatal("format_parser never started")
	}
	if got := statusOf(d.statusJSON(t, bin), id); got != pipeline.WorkflowInProgress {
		t.Fatalf("status while running: %q, want %s", got, pipeline.WorkflowInProgress)
	}

	ctx := t.Context()
	if err := d.Executor.Stop(ctx, res.ExecutionID, "Operator", "stopped by the test"); err != nil {
		t.Fatal(err)
	}
	// AWS and LocalStack end a stopped execution ABORTED; moto ends one
	// waiting for a task token FAILED with States.Timeout. Either way only
	// the reconciler can record it: no Catch runs.
	ex := d.wait(t, res.ExecutionID)
	if ex.Status != "ABORTED" && ex.Status != "FAILED" {
		t.Fatalf("execution %s after stop", ex.Status)
	}
	t.Logf("stopped execution ended %s %s", ex.Status, ex.Error)
	if p, err := d.B.Repo.GetProgress(ctx, id); err != nil || p.Status != pipeline.WorkflowInProgress {
		t.Fatalf("before reconciling: %s, %v", p.Status, err)
	}
	r := &sfn.Reconciler{API: d.SFN, Repo: d.B.Repo, StateMachineARN: d.StateMachineARN}
	rep, err := r.ReconcileInProgress(ctx)
	if err != nil || rep[sfn.OutcomeMarked] != 1 {
		t.Fatalf("reconcile: %v, %v", rep, err)
	}
	if got := statusOf(d.statusJSON(t, bin), id); got != "" {
		t.Errorf("still listed as %s after the stop", got)
	}
	if got := statusOf(d.statusJSON(t, bin, "--failed"), id); got != pipeline.WorkflowFailed {
		t.Errorf("failed list shows %q", got)
	}
	prog, err := d.B.Repo.GetProgress(ctx, id)
	if err != nil || !strings.HasPrefix(prog.Error, "execution ") {
		t.Errorf("reason %q, %v", prog.Error, err)
	}
}
