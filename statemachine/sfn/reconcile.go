package sfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
)

// EventBridge names of the execution status change event.
const (
	StatusChangeSource     = "aws.states"
	StatusChangeDetailType = "Step Functions Execution Status Change"
)

// StatusChange is the detail of EventBridge's "Step Functions Execution
// Status Change" event.
type StatusChange struct {
	ExecutionARN    string `json:"executionArn"`
	StateMachineARN string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Status          string `json:"status"`
	StartDate       int64  `json:"startDate,omitempty"` // epoch milliseconds
	StopDate        int64  `json:"stopDate,omitempty"`
	// Input is the execution input as a JSON string; null when it was too
	// large to include.
	Input  *string `json:"input"`
	Output *string `json:"output"`
	Error  *string `json:"error"`
	Cause  *string `json:"cause"`
}

// Reconciler marks a workflow failed when its execution failed, timed out or
// was aborted without the state machine recording it (a Catch cannot see a
// timeout of the whole execution, an abort or a history limit), so the table
// never says "in progress" forever.
type Reconciler struct {
	API             ExecutionAPI
	Repo            *pipeline.Repository
	StateMachineARN string
	// Grace is how long a pending workflow may have no execution before it
	// counts as never started (ingest registers, then starts). Default 15m.
	Grace  time.Duration
	Now    func() time.Time
	Logger *slog.Logger
	// Parallelism bounds concurrent DescribeExecution calls. Default 4.
	Parallelism int
	// Bucket is the deployment's bucket, named in the input of the held
	// workflows it starts (as ingest names it).
	Bucket string
	// StateMachineOf picks the state machine of a held workflow's pipeline
	// version; nil starts every workflow on StateMachineARN.
	StateMachineOf func(ctx context.Context, pipeline string, version int) (string, error)
}

// Outcome is what reconciling one workflow did.
type Outcome string

const (
	OutcomeIgnored    Outcome = "ignored"     // execution running or succeeded, or not a docpipe workflow
	OutcomeMarked     Outcome = "marked"      // workflow marked failed now
	OutcomeUpToDate   Outcome = "up_to_date"  // workflow already records the end
	OutcomeNotStarted Outcome = "not_started" // pending workflow whose execution never started, marked failed
	OutcomeHeld       Outcome = "held"        // pending workflow of a full project, not started yet
	OutcomeStarted    Outcome = "started"     // admitted workflow started now (held, or its start was lost)
)

func (r *Reconciler) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// failedStatus reports whether an execution status ends a workflow in
// failure.
func failedStatus(s string) bool {
	switch types.ExecutionStatus(s) {
	case types.ExecutionStatusFailed, types.ExecutionStatusTimedOut, types.ExecutionStatusAborted:
		return true
	}
	return false
}

// HandleStatusChange applies one status change event.
func (r *Reconciler) HandleStatusChange(ctx context.Context, ev StatusChange) (Outcome, error) {
	if !failedStatus(ev.Status) {
		return OutcomeIgnored, nil
	}
	wfID, ok := workflowOf(ev)
	if !ok {
		r.logger().Warn("status change of an execution that is not a docpipe workflow", "execution", ev.ExecutionARN)
		return OutcomeIgnored, nil
	}
	if stale, err := r.supersededExecution(ctx, wfID, ev.ExecutionARN); err != nil || stale {
		return OutcomeIgnored, err
	}
	out, err := r.markFailed(ctx, wfID, reason(ev.Status, aws.ToString(ev.Error), aws.ToString(ev.Cause)))
	if err != nil || out != OutcomeMarked {
		return out, err
	}
	// The failed workflow gave its slot back: a held one may take it.
	prog, err := r.Repo.GetProgress(ctx, wfID)
	if err != nil {
		return out, err
	}
	_, err = r.StartHeld(ctx, prog.ProjectID)
	return out, err
}

// supersededExecution reports whether execARN is not the workflow's current
// execution: a late or redelivered event of a run that a re-run replaced
// must not fail the re-run.
func (r *Reconciler) supersededExecution(ctx context.Context, workflowID, execARN string) (bool, error) {
	prog, err := r.Repo.GetProgress(ctx, workflowID)
	if errors.Is(err, pipeline.ErrNotFound) {
		return false, nil // markFailed reports the unknown workflow
	}
	if err != nil {
		return false, err
	}
	wf, err := r.Repo.GetWorkflow(ctx, prog.DocumentID, workflowID)
	if err != nil {
		return false, err
	}
	if wf.ExecutionID != "" && execARN != "" && wf.ExecutionID != execARN {
		r.logger().Info("status change of a superseded execution", "workflow", workflowID, "execution", execARN, "current", wf.ExecutionID)
		return true, nil
	}
	return false, nil
}

// workflowOf finds the workflow id: from the input when included, else from
// the execution name (executions are named after workflows).
func workflowOf(ev StatusChange) (string, bool) {
	if ev.Input != nil {
		var in pipeline.ExecutionInput
		if json.Unmarshal([]byte(*ev.Input), &in) == nil && in.Workflow.WorkflowID != "" {
			return in.Workflow.WorkflowID, true
		}
	}
	if validName(ev.Name) {
		return WorkflowOfExecution(ev.Name), true
	}
	return "", false
}

func reason(status, errName, cause string) string {
	var msg string
	switch types.ExecutionStatus(status) {
	case types.ExecutionStatusTimedOut:
		msg = "execution timed out"
	case types.ExecutionStatusAborted:
		msg = "execution aborted"
	default:
		msg = "execution failed"
	}
	if errName != "" {
		msg += ": " + errName
	}
	if cause != "" {
		msg += ": " + cause
	}
	return truncate(msg, maxCauseLen)
}

// markFailed fails the steps still in progress and the workflow, the way
// the workflow_failed step does. A workflow that already ended is left as
// it is.
func (r *Reconciler) markFailed(ctx context.Context, workflowID, why string) (Outcome, error) {
	prog, err := r.Repo.GetProgress(ctx, workflowID)
	if errors.Is(err, pipeline.ErrNotFound) {
		r.logger().Warn("execution of an unknown workflow", "workflow", workflowID)
		return OutcomeIgnored, nil
	}
	if err != nil {
		return "", err
	}
	if prog.Status.Final() {
		return OutcomeUpToDate, nil
	}
	ref := pipeline.WorkflowRef{ProjectID: prog.ProjectID, DocumentID: prog.DocumentID, WorkflowID: workflowID}
	for name, st := range prog.Steps {
		if st.Status != pipeline.StepInProgress {
			continue
		}
		if _, err := r.Repo.TransitionSteps(ctx, ref, pipeline.StepChange{Step: name, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepFailed, Error: why}); err != nil && !errors.Is(err, pipeline.ErrStale) {
			return "", fmt.Errorf("sfn: fail step %s of %s: %w", name, workflowID, err)
		}
	}
	applied, err := r.Repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending, pipeline.WorkflowInProgress}, pipeline.WorkflowFailed, why)
	if errors.Is(err, pipeline.ErrStale) {
		// Completed meanwhile: the table is right.
		return OutcomeUpToDate, nil
	}
	if err != nil {
		return "", fmt.Errorf("sfn: fail workflow %s: %w", workflowID, err)
	}
	if !applied {
		return OutcomeUpToDate, nil
	}
	r.logger().Info("workflow marked failed", "workflow", workflowID, "reason", why)
	return OutcomeMarked, nil
}

// Report counts what ReconcileInProgress did, by outcome.
type Report map[Outcome]int

// ReconcileInProgress checks the execution of every pending and
// in-progress workflow in the status index and records the ones that ended
// in failure: for environments without the EventBridge rule, and as a
// periodic safety net where there is one. Then it recounts the running
// workflows of their projects (pipeline.RecountRunning) and starts the
// held workflows that fit in the slots free now (StartHeld).
func (r *Reconciler) ReconcileInProgress(ctx context.Context) (Report, error) {
	var mu sync.Mutex
	report := Report{}
	g, gctx := errgroup.WithContext(ctx)
	n := r.Parallelism
	if n <= 0 {
		n = 4
	}
	g.SetLimit(n)
	var projects []string
	for _, status := range []pipeline.WorkflowStatus{pipeline.WorkflowInProgress, pipeline.WorkflowPending} {
		progs, err := r.Repo.ListByStatus(ctx, status, 0)
		if err != nil {
			return nil, err
		}
		for _, p := range progs {
			projects = append(projects, p.ProjectID)
			g.Go(func() error {
				out, err := r.reconcileOne(gctx, p)
				if err != nil {
					return err
				}
				mu.Lock()
				report[out]++
				mu.Unlock()
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return report, err
	}
	// The projects' running counts are set from what is in progress now,
	// whatever a worker that died or a workflow older than the counts left.
	if err := r.Repo.RecountRunning(ctx, projects...); err != nil {
		return report, err
	}
	started, err := r.StartHeld(ctx, projects...)
	report[OutcomeStarted] += started
	return report, err
}

func (r *Reconciler) reconcileOne(ctx context.Context, p pipeline.StepProgress) (Outcome, error) {
	wf, err := r.Repo.GetWorkflow(ctx, p.DocumentID, p.WorkflowID)
	if err != nil {
		return "", err
	}
	execARN := wf.ExecutionID
	if execARN == "" {
		name, err := ExecutionName(p.WorkflowID)
		if err != nil {
			return OutcomeIgnored, nil
		}
		if execARN, err = ExecutionARN(r.StateMachineARN, name); err != nil {
			return "", err
		}
	}
	ex, err := describe(ctx, r.API, execARN)
	if errors.Is(err, ErrNoExecution) {
		if out, err := r.admittedWithoutExecution(ctx, p, wf); err != nil || out != "" {
			return out, err
		}
		grace := r.Grace
		if grace <= 0 {
			grace = 15 * time.Minute
		}
		if p.Status != pipeline.WorkflowPending || r.now().Sub(wf.UpdatedAt) < grace {
			return OutcomeIgnored, nil
		}
		out, err := r.markFailed(ctx, p.WorkflowID, "execution never started")
		if out == OutcomeMarked {
			out = OutcomeNotStarted
		}
		return out, err
	}
	if err != nil {
		return "", err
	}
	if !failedStatus(string(ex.Status)) {
		return OutcomeIgnored, nil
	}
	return r.markFailed(ctx, p.WorkflowID, reason(string(ex.Status), ex.Error, ex.Cause))
}

// admittedWithoutExecution handles a workflow of a limited project that
// has no execution: pending, it is held for a slot (StartHeld starts it);
// in progress, it was admitted and its start was lost, so it starts now.
// "" leaves the workflow to the checks of unlimited projects.
func (r *Reconciler) admittedWithoutExecution(ctx context.Context, p pipeline.StepProgress, wf pipeline.Workflow) (Outcome, error) {
	if wf.ExecutionID != "" {
		return "", nil
	}
	limited, err := r.limited(ctx, p.ProjectID)
	if err != nil || !limited {
		return "", err
	}
	if p.Status == pipeline.WorkflowPending {
		return OutcomeHeld, nil
	}
	if _, err := r.start(ctx, wf); err != nil {
		return "", err
	}
	return OutcomeStarted, nil
}
