package embedded_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/statemachine/embedded"
)

// A review after the summary, and a stage after the review that publishes
// the summary's text: what it publishes shows whether edits flowed on.
const reviewPipeline = `name: reviewed
stages:
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: document_summarizer
    needs: [segment_analyzer]
    run: {builtin: document_summarizer}
  - name: check
    needs: [document_summarizer]
    run:
      review: {assign: [alice, bob]}
      due: 72h
      hard_limit: 168h
      on_timeout: fail
  - name: publish
    needs: [check, document_summarizer]
    run: {command: [python3, publish.py]}
`

const publishPy = `import json, sys
req = json.load(sys.stdin)
summary = json.load(open(req["inputs"]["needs"]["document_summarizer"]))
print(json.dumps({"published": summary["summary"]}))
`

func reviewRig(t *testing.T) userRig {
	t.Helper()
	return newUserRig(t, writePipeline(t, reviewPipeline, map[string]string{"publish.py": publishPy}))
}

// parked runs a document to its review and checks that it waits there.
func (r userRig) parked(t *testing.T) pipeline.WorkflowRef {
	t.Helper()
	ref, prog := r.run(t, sample("notes.md"))
	if prog.Status != pipeline.WorkflowWaitingReview {
		t.Fatalf("status %s (%s), want waiting_review", prog.Status, prog.Error)
	}
	if st := prog.Steps["publish"].Status; st != pipeline.StepPending {
		t.Fatalf("publish ran before the review: %s", st)
	}
	waiting, err := r.repo.ListByStatus(context.Background(), pipeline.WorkflowWaitingReview, 0)
	if err != nil || len(waiting) != 1 || waiting[0].WorkflowID != ref.WorkflowID {
		t.Fatalf("waiting_review in the status index: %+v, %v", waiting, err)
	}
	return ref
}

// resume runs the workflow again, as `docpipe work` does for decided
// reviews.
func (r userRig) resume(t *testing.T, ref pipeline.WorkflowRef) (pipeline.StepProgress, error) {
	t.Helper()
	ctx := context.Background()
	decided, err := r.repo.ListDecidedReviews(ctx)
	if err != nil || len(decided) != 1 || decided[0].WorkflowID != ref.WorkflowID {
		t.Fatalf("decided reviews: %+v, %v", decided, err)
	}
	runErr := r.engine.Run(ctx, r.def, 1, pipeline.ExecutionInput{Workflow: ref, Bucket: "local", ManifestKey: pipeline.ManifestBlobKey(ref)})
	prog, err := r.repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	return prog, runErr
}

func TestReviewApproveWithEditsFlowsIntoLaterStages(t *testing.T) {
	t.Parallel()
	r := reviewRig(t)
	ref := r.parked(t)
	ctx := context.Background()
	// Waiting runs nothing: running it again opens no second review and
	// parks again.
	err := r.engine.Run(ctx, r.def, 1, pipeline.ExecutionInput{Workflow: ref, Bucket: "local", ManifestKey: pipeline.ManifestBlobKey(ref)})
	if !errors.Is(err, embedded.ErrWaitingReview) {
		t.Fatalf("second run: %v, want ErrWaitingReview", err)
	}
	if _, err := r.repo.ActOnReview(ctx, ref.WorkflowID, "check", pipeline.Decision{Action: pipeline.ActionApprove, By: "mallory"}); !errors.Is(err, pipeline.ErrNotReviewer) {
		t.Fatalf("approve by someone not assigned: %v", err)
	}
	if _, err := r.repo.ActOnReview(ctx, ref.WorkflowID, "check", pipeline.Decision{
		Action: pipeline.ActionApprove, By: "alice", Comment: "fine", Edits: map[string]string{"summary": "Edited by alice."},
	}); err != nil {
		t.Fatal(err)
	}
	prog, err := r.resume(t, ref)
	if err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	wantCompleted(t, prog)
	if got := r.blob(t, pipeline.StageOutputBlobKey(ref, "publish")); !strings.Contains(got, "Edited by alice.") {
		t.Errorf("publish saw %s, want the edited summary", got)
	}
	trs, err := r.repo.ListTransitions(ctx, ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tr := range trs {
		found = found || tr.Step == "check" && tr.Actor == "alice" && tr.To == "review_approved"
	}
	if !found {
		t.Errorf("no audit item of alice's approval in %+v", trs)
	}
	if decided, _ := r.repo.ListDecidedReviews(ctx); len(decided) != 0 {
		t.Errorf("a taken decision stays listed: %+v", decided)
	}
}

func TestReviewRejectFailsWithTheReason(t *testing.T) {
	t.Parallel()
	r := reviewRig(t)
	ref := r.parked(t)
	ctx := context.Background()
	if _, err := r.repo.ActOnReview(ctx, ref.WorkflowID, "check", pipeline.Decision{Action: pipeline.ActionClaim, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.repo.ActOnReview(ctx, ref.WorkflowID, "check", pipeline.Decision{Action: pipeline.ActionReject, By: "alice"}); !errors.Is(err, pipeline.ErrNotReviewer) {
		t.Fatalf("reject of bob's claimed review by alice: %v", err)
	}
	if _, err := r.repo.ActOnReview(ctx, ref.WorkflowID, "check", pipeline.Decision{Action: pipeline.ActionReject, By: "bob", Comment: "wrong customer"}); err != nil {
		t.Fatal(err)
	}
	prog, _ := r.resume(t, ref)
	if prog.Status != pipeline.WorkflowFailed || !strings.Contains(prog.Error, "wrong customer") || !strings.Contains(prog.Error, "bob") {
		t.Fatalf("status %s, error %q; want failed with bob's reason", prog.Status, prog.Error)
	}
	if st := prog.Steps["publish"].Status; st == pipeline.StepCompleted {
		t.Error("publish ran after a rejection")
	}
}

func TestReviewRaceHasOneWinner(t *testing.T) {
	t.Parallel()
	r := reviewRig(t)
	ref := r.parked(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, who := range []string{"alice", "bob"} {
		wg.Go(func() {
			action := pipeline.ActionApprove
			if i == 1 {
				action = pipeline.ActionReject
			}
			_, errs[i] = r.repo.ActOnReview(ctx, ref.WorkflowID, "check", pipeline.Decision{Action: action, By: who})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, pipeline.ErrReviewDecided):
			t.Errorf("loser's error %v, want ErrReviewDecided", err)
		}
	}
	v, err := r.repo.GetReview(ctx, ref.WorkflowID, "check")
	if won != 1 || err != nil || !v.State.Decided() {
		t.Fatalf("%d winners (%v), review %+v", won, errs, v)
	}
	raw, _ := json.Marshal(v)
	t.Logf("decided: %s", raw)
}
