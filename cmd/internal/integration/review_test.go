//go:build integration

package integration

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/review"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// reviewedPipeline stops every document for alice after its summary.
const reviewedPipeline = `name: it-reviewed
stages:
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: document_summarizer
    needs: [segment_analyzer]
    run: {builtin: document_summarizer}
  - name: check
    needs: [document_summarizer]
    run: {review: {assign: [alice]}, due: 72h}
`

// A review stage on Step Functions in queue mode: the worker stores the
// task token on the review and answers nothing, so the execution waits
// (RUNNING) with the workflow waiting_review. An approval with an edit
// answers the task with SendTaskSuccess and the execution and workflow
// complete with the edited summary; a rejection answers SendTaskFailure and
// both fail, the review step with the reviewer's reason.
func TestReviewThroughStepFunctions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(file, []byte(reviewedPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := pipelinefile.Load(file)
	if err == nil {
		err = pipelinefile.Validate(def, pipelinefile.TargetAWS)
	}
	if err != nil {
		t.Fatal(err)
	}
	d := deploy(t, deployOptions{})
	version, arn := d.deployPipeline(t, def)
	d.Ingest.Ingester.Definition = def
	d.Ingest.Executor = &sfn.Executor{API: d.SFN, StateMachineARN: arn, Repo: d.B.Repo}
	d.Ingest.Pipeline, d.Ingest.PipelineVersion = def.Name, version
	callback := sfn.ReviewCallback{API: d.SFN}

	approved := d.upload(t, filepath.Join(samplesDir, "notes.md"))
	v := d.parked(t, approved)
	if _, err := review.Decide(ctx, d.B.Repo, d.B.Blobs, callback, v.ID, pipeline.Decision{Action: pipeline.ActionApprove, By: "alice", Edits: map[string]string{"summary": "Checked by alice."}}); err != nil {
		t.Fatal(err)
	}
	if ex := d.wait(t, approved.ExecutionID); ex.Status != sfntypes.ExecutionStatusSucceeded {
		t.Fatalf("approved: execution %s: %s %s", ex.Status, ex.Error, ex.Cause)
	}
	prog, err := d.B.Repo.GetProgress(ctx, approved.Registration.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Status != pipeline.WorkflowCompleted || prog.Steps["check"].Status != pipeline.StepCompleted {
		t.Errorf("approved: workflow %s, check %+v", prog.Status, prog.Steps["check"])
	}
	summary, err := blob.GetBytes(ctx, d.B.Blobs, pipeline.SummaryBlobKey(approved.Registration.Ref()), 1<<20)
	if err != nil || !strings.Contains(string(summary), "Checked by alice.") {
		t.Errorf("approved: summary %q, %v", summary, err)
	}

	rejected := d.uploadBytes(t, "rejected.txt", []byte("A document alice refuses.\n\nIt has two sections.\n"))
	v = d.parked(t, rejected)
	if _, err := review.Decide(ctx, d.B.Repo, d.B.Blobs, callback, v.ID, pipeline.Decision{Action: pipeline.ActionReject, By: "alice", Comment: "wrong customer"}); err != nil {
		t.Fatal(err)
	}
	ex := d.wait(t, rejected.ExecutionID)
	if ex.Status != sfntypes.ExecutionStatusFailed {
		t.Fatalf("rejected: execution %s: %s %s", ex.Status, ex.Error, ex.Cause)
	}
	prog, err = d.B.Repo.GetProgress(ctx, rejected.Registration.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Status != pipeline.WorkflowFailed || prog.Steps["check"].Status != pipeline.StepFailed {
		t.Errorf("rejected: workflow %s, check %+v", prog.Status, prog.Steps["check"])
	}
	if !strings.Contains(prog.Steps["check"].Error, "wrong customer") {
		t.Errorf("rejected: the review step records %q, not the reviewer's reason", prog.Steps["check"].Error)
	}
	// Step Functions hands the task's cause to workflow_failed, which
	// records it as the workflow's error; moto drops the cause of
	// SendTaskFailure (statemachine/interp/DIFFERENCES.md), and the
	// workflow records the error's name instead.
	switch {
	case strings.Contains(prog.Error, "rejected by alice: wrong customer"):
	case prog.Error == steperr.NameStageFailed:
		t.Logf("rejected: the workflow records %q: the emulator dropped the task failure's cause", prog.Error)
	default:
		t.Errorf("rejected: workflow error %q (execution %s: %s)", prog.Error, ex.Error, ex.Cause)
	}
}

// parked waits until the worker has opened the review of the workflow res
// started and stored its task token, and checks that the execution still
// runs while the workflow waits for the review.
func (d *deployment) parked(t *testing.T, res s3ingest.Result) pipeline.Review {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(executionDeadline)
	for {
		v, err := d.B.Repo.GetReview(ctx, res.Registration.Workflow.ID, "check")
		switch {
		case err == nil && v.TaskToken != "":
			// The handler opens the review (with the token), then marks the
			// workflow waiting: give the second write its moment.
			prog, err := d.B.Repo.GetProgress(ctx, res.Registration.Workflow.ID)
			if err != nil {
				t.Fatal(err)
			}
			if prog.Status != pipeline.WorkflowWaitingReview {
				if time.Now().After(deadline) {
					t.Fatalf("%s: workflow is %s while its review waits", res.Registration.Document.FileName, prog.Status)
				}
				break
			}
			ex, err := d.Executor.Describe(ctx, res.ExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			if ex.Status != sfntypes.ExecutionStatusRunning {
				t.Fatalf("execution is %s while its review waits: %s %s", ex.Status, ex.Error, ex.Cause)
			}
			return v
		case err != nil && !errors.Is(err, pipeline.ErrNotFound):
			t.Fatal(err)
		}
		if ex, err := d.Executor.Describe(ctx, res.ExecutionID); err == nil && ex.Status != sfntypes.ExecutionStatusRunning {
			t.Fatalf("execution ended %s before its review opened: %s %s", ex.Status, ex.Error, ex.Cause)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no review with a task token after %v", executionDeadline)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
