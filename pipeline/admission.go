package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/docpipe/docpipe/pipeline/table"
)

// ErrNotAdmitted is AdmitWorkflow's answer when the project already runs
// as many workflows as its max_concurrent_workflows allows: the workflow
// stays pending.
var ErrNotAdmitted = errors.New("pipeline: the project runs as many workflows as it allows")

// A project's running workflows are counted on an item of their own in the
// project's partition, not on the project item: settings are written whole
// under a revision check, and a counter there would be overwritten by them
// (or make every admission bump the settings' revision).
const (
	attrRunning  = "running"   // workflows of the project in progress
	attrSlotsSeq = "slots_seq" // bumped by every change, so a recount never writes over one
	pathMaxRuns  = "data.settings.max_concurrent_workflows"
)

// ProjectSlots is a project's count of workflows in progress.
type ProjectSlots struct {
	Running int
	seq     int
}

// GetProjectSlots reads a project's running count (zero when nothing ever
// ran).
func (r *Repository) GetProjectSlots(ctx context.Context, projectID string) (ProjectSlots, error) {
	it, err := r.t.Get(ctx, ProjectSlotsKey(projectID))
	switch {
	case errors.Is(err, table.ErrNotFound):
		return ProjectSlots{}, nil
	case err != nil:
		return ProjectSlots{}, fmt.Errorf("pipeline: get running count of %s: %w", projectID, err)
	}
	return ProjectSlots{Running: intAttr(it[attrRunning]), seq: intAttr(it[attrSlotsSeq])}, nil
}

func intAttr(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case int64:
		return int(n)
	}
	return 0
}

// AdmitWorkflow moves a pending workflow to in_progress if its project has
// a free slot, taking the slot in the same transaction: the project's
// running count goes up on condition that it is below the project's
// max_concurrent_workflows (no limit when unset). ErrNotAdmitted leaves
// the workflow pending; a workflow already in progress is admitted as it
// is, one in another state is ErrStale.
func (r *Repository) AdmitWorkflow(ctx context.Context, ref WorkflowRef) error {
	_, err := r.setWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowPending}, WorkflowInProgress, "", true, nil, nil)
	return err
}

// AdmitWorkflowSeen is AdmitWorkflow for a caller that has just read the
// step item (seen), as StatusSeen is for SetWorkflowStatus.
func (r *Repository) AdmitWorkflowSeen(ctx context.Context, ref WorkflowRef, seen StepProgress) error {
	_, err := r.setWorkflowStatus(ctx, ref, []WorkflowStatus{WorkflowPending}, WorkflowInProgress, "", true, &seen, nil)
	return err
}

// slotChange is what a status change does to the project's running count.
type slotChange struct {
	from    []WorkflowStatus // narrowed to the workflow's actual status
	actions []table.TxAction
	max     int // the limit checked, 0 for none
}

// slotActions reads what a change from → to needs and returns the
// transaction actions that keep the running count: one up when the
// workflow enters in_progress (below the limit only if gate), one down when
// it leaves in_progress for an outcome or a review, never below zero. A
// count already at zero is left alone: the workflow was running before
// anything counted it, and the next recount makes it right.
func (r *Repository) slotActions(ctx context.Context, ref WorkflowRef, from []WorkflowStatus, to WorkflowStatus, gate bool, progress func() (StepProgress, error)) (slotChange, error) {
	c := slotChange{from: from}
	if to != WorkflowInProgress && !slices.Contains(from, WorkflowInProgress) {
		return c, nil
	}
	prog, err := progress()
	if err != nil {
		return c, err
	}
	if !slices.Contains(from, prog.Status) {
		return c, nil // the status transaction fails on its own condition
	}
	c.from = []WorkflowStatus{prog.Status}
	entering := to == WorkflowInProgress && prog.Status != WorkflowInProgress
	leaving := prog.Status == WorkflowInProgress && to != WorkflowInProgress
	key := ProjectSlotsKey(ref.ProjectID)
	switch {
	case entering:
		up := table.TxUpdate{Key: key, Updates: []table.Update{table.Add{Path: attrRunning, Delta: 1}, table.Add{Path: attrSlotsSeq, Delta: 1}}}
		if gate {
			p, err := r.GetProject(ctx, ref.ProjectID)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return c, err
			}
			c.max = p.Settings.MaxConcurrentWorkflows
			var same table.Cond = table.NotExists{Path: pathMaxRuns}
			if c.max > 0 {
				same = table.Equals{Path: pathMaxRuns, Value: c.max}
				up.Cond = table.Or{table.NotExists{Path: attrRunning}, table.LessThan{Path: attrRunning, Value: float64(c.max)}}
			}
			// A limit changed since it was read makes the admission read it again.
			c.actions = append(c.actions, table.TxCheck{Key: ProjectKey(ref.ProjectID), Cond: same})
		}
		c.actions = append(c.actions, up)
	case leaving:
		s, err := r.GetProjectSlots(ctx, ref.ProjectID)
		if err != nil {
			return c, err
		}
		if s.Running >= 1 {
			c.actions = append(c.actions, table.TxUpdate{Key: key,
				Updates: []table.Update{table.Add{Path: attrRunning, Delta: -1}, table.Add{Path: attrSlotsSeq, Delta: 1}},
				Cond:    table.And{table.Exists{Path: attrRunning}, table.Not{Cond: table.LessThan{Path: attrRunning, Value: 1}}}})
		}
	}
	return c, nil
}

// notAdmitted tells, after an admission's transaction failed with the
// workflow still pending, whether the project's limit refused it.
func (r *Repository) notAdmitted(ctx context.Context, ref WorkflowRef, max int) (bool, error) {
	if max <= 0 {
		return false, nil
	}
	s, err := r.GetProjectSlots(ctx, ref.ProjectID)
	if err != nil {
		return false, err
	}
	p, err := r.GetProject(ctx, ref.ProjectID)
	if err != nil {
		return false, err
	}
	return p.Settings.MaxConcurrentWorkflows == max && s.Running >= max, nil
}

// RecountRunning sets each project's running count to the number of its
// workflows in progress, read from the status index (one query per
// shard for all the projects), so that a worker that died holding slots
// never leaves its project blocked. A count that changed while the
// workflows were read is counted again.
func (r *Repository) RecountRunning(ctx context.Context, projectIDs ...string) error {
	todo := slices.Clone(projectIDs)
	slices.Sort(todo)
	todo = slices.Compact(todo)
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt == maxAttempts {
			return fmt.Errorf("pipeline: running counts of %v keep changing: %w", todo, table.ErrTransactionConflict)
		}
		if attempt > 0 {
			if err := r.sleep(ctx, backoff(attempt-1)); err != nil {
				return err
			}
		}
		before := make([]ProjectSlots, len(todo))
		for i, p := range todo {
			s, err := r.GetProjectSlots(ctx, p)
			if err != nil {
				return err
			}
			before[i] = s
		}
		running, err := r.ListByStatus(ctx, WorkflowInProgress, 0)
		if err != nil {
			return err
		}
		count := map[string]int{}
		for _, w := range running {
			count[w.ProjectID]++
		}
		var again []string
		for i, p := range todo {
			var same table.Cond = table.NotExists{Path: attrSlotsSeq}
			if before[i].seq != 0 {
				same = table.Equals{Path: attrSlotsSeq, Value: before[i].seq}
			}
			_, err := r.t.Update(ctx, ProjectSlotsKey(p), []table.Update{
				table.Set{Path: attrRunning, Value: count[p]}, table.Add{Path: attrSlotsSeq, Delta: 1},
			}, same)
			switch {
			case errors.Is(err, table.ErrConditionFailed):
				again = append(again, p)
			case err != nil:
				return fmt.Errorf("pipeline: recount running workflows of %s: %w", p, err)
			}
		}
		todo = again
	}
	return nil
}

// Admission lets one process's workflows into their projects' slots
// (max_concurrent_workflows) on a state home that process alone works on:
// a pending workflow is admitted before it runs, or waits until a workflow
// of its project that this process runs ends. The home is locked by one
// process at a time, so a project full of workflows this process does not
// run was left so by one that died: its count is taken again from the
// workflows in progress. On AWS the same rules admit workflows when they
// are started (AdmitWorkflow) and when held ones are released.
type Admission struct {
	repo    *Repository
	mu      sync.Mutex
	running map[string]int  // this process's workflows in progress, per project
	adopted map[string]bool // of those, the ones taken up that have not entered yet, by id
	freed   chan struct{}   // closed (and replaced) when one of them ends
}

// NewAdmission admits workflows through repo.
func NewAdmission(repo *Repository) *Admission {
	return &Admission{repo: repo, running: map[string]int{}, adopted: map[string]bool{}, freed: make(chan struct{})}
}

// Adopt counts wf, a workflow in progress that this process is about to
// take up, as running here before it enters: a pending workflow of its
// project that enters first then waits for it to end, instead of finding
// the project full of workflows no process runs. Enter takes the adoption
// over; Drop gives it up for a workflow that will not enter.
func (a *Admission) Adopt(wf Workflow) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.adopted[wf.ID] {
		a.adopted[wf.ID] = true
		a.running[wf.ProjectID]++
	}
}

// Drop gives up wf's adoption, if it has one, as if it had run and ended.
func (a *Admission) Drop(wf Workflow) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.adopted[wf.ID] {
		delete(a.adopted, wf.ID)
		a.endLocked(wf.ProjectID)
	}
}

// Enter admits wf (a workflow already under way runs as it is) and
// returns what to call when it stops running here, and the step item as
// the admission left it (nil when it did not change it): the first step
// starts from it instead of reading it again.
func (a *Admission) Enter(ctx context.Context, wf Workflow) (leave func(), admitted *StepProgress, err error) {
	ref := WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
	recounted := false
	for {
		prog, err := a.repo.GetProgress(ctx, wf.ID)
		if err != nil {
			return nil, nil, err
		}
		if prog.Status != WorkflowPending {
			return a.hold(wf), nil, nil // under way: the engine sees where to go on
		}
		a.Drop(wf) // an adopted workflow was in progress; it is not now
		err = a.repo.AdmitWorkflowSeen(ctx, ref, prog)
		switch {
		case err == nil:
			prog.Status = WorkflowInProgress
			return a.hold(wf), &prog, nil
		case errors.Is(err, ErrStale):
			return a.hold(wf), nil, nil // it moved on, and the engine sees where to
		case !errors.Is(err, ErrNotAdmitted):
			return nil, nil, err
		}
		a.mu.Lock()
		mine, freed := a.running[wf.ProjectID], a.freed
		a.mu.Unlock()
		if mine == 0 {
			if recounted {
				return nil, nil, fmt.Errorf("workflow %s stays pending: project %s is at its max_concurrent_workflows with workflows in progress that `docpipe work` resumes", wf.ID, wf.ProjectID)
			}
			if err := a.repo.RecountRunning(ctx, wf.ProjectID); err != nil {
				return nil, nil, err
			}
			recounted = true
			continue
		}
		select {
		case <-freed:
			recounted = false
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// hold counts wf as running here (an adopted workflow already is) and
// returns what to call when it ends.
func (a *Admission) hold(wf Workflow) func() {
	a.mu.Lock()
	if a.adopted[wf.ID] {
		delete(a.adopted, wf.ID)
	} else {
		a.running[wf.ProjectID]++
	}
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.endLocked(wf.ProjectID)
	}
}

// endLocked counts one of this process's workflows of projectID as ended
// and wakes those waiting for its slot. a.mu is held.
func (a *Admission) endLocked(projectID string) {
	a.running[projectID]--
	close(a.freed)
	a.freed = make(chan struct{})
}
