package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// GetProgress reads the step item of a workflow.
func (r *Repository) GetProgress(ctx context.Context, workflowID string) (StepProgress, error) {
	var p StepProgress
	return p, r.get(ctx, StepKey(workflowID), &p)
}

// transitionStepFrom applies one change on its own: from c.Seen when the
// step is still there, else from the state read here.
func (r *Repository) transitionStepFrom(ctx context.Context, ref WorkflowRef, c StepChange) (bool, error) {
	switch {
	case c.Seen == c.To:
		return false, nil // a retried change that committed before
	case !slices.Contains(c.From, c.Seen):
		c.Seen = ""
	}
	return r.transitionStep(ctx, ref, c)
}

// transitionStep applies one change: from c.Seen when the caller saw the
// step there, else from the state read here.
func (r *Repository) transitionStep(ctx context.Context, ref WorkflowRef, c StepChange) (bool, error) {
	step, seen, from, to, errMsg, info := c.Step, c.Seen, c.From, c.To, c.Error, c.Info
	if err := validName("step", step); err != nil {
		return false, err
	}
	if len(from) == 0 {
		return false, fmt.Errorf("pipeline: transition of %s with no from state", step)
	}
	// The audit record says which from state the step left: the one state
	// possible, the one the caller saw, or else the one read here.
	cur := from[0]
	switch {
	case seen != "":
		cur = seen
	case len(from) > 1:
		st, done, err := r.stepFrom(ctx, ref.WorkflowID, step, from, to)
		if err != nil || done {
			return false, err
		}
		cur = st
	}
	applied := false
	what := func() string { return fmt.Sprintf("step %s of %s", step, ref.WorkflowID) }
	err := r.retry(ctx, what, func() error {
		actions := r.transitionActions(ref.WorkflowID, step, cur, to, errMsg, c.At, c.ReusedFrom, c.Output)
		if info != nil {
			wf, stepUpdates, err := r.workflowInfoActions(ref, *info)
			if err != nil {
				return err
			}
			change := actions[0].(table.TxUpdate)
			change.Updates = append(change.Updates, stepUpdates...)
			actions = append([]table.TxAction{change, actions[1]}, wf...)
		}
		offers, err := r.offerActions([]StepChange{c})
		if err != nil {
			return err
		}
		err = r.t.Transact(ctx, append(actions, offers...))
		if err == nil {
			applied = true
			return nil
		}
		if !lostRace(err) {
			return fmt.Errorf("pipeline: transition %s of %s: %w", step, ref.WorkflowID, err)
		}
		st, done, err := r.stepFrom(ctx, ref.WorkflowID, step, from, to)
		if err != nil || done {
			return err
		}
		cur = st
		return errLostRace
	})
	return applied, err
}

// StepChange is one step's move for TransitionSteps: to To from one of
// From, the states the move is valid from. The other fields are options.
type StepChange struct {
	Step string
	// Seen is the state the caller has just read the step in: the change
	// is tried from it without reading the step again. Empty: the step is
	// read when From offers more than one state.
	Seen  StepStatus
	From  []StepStatus
	To    StepStatus
	Error string
	// Info is what the step learned about the workflow (its format, its
	// segment count), recorded on both workflow items with the change, in
	// the same transaction; nil records nothing more.
	Info *WorkflowInfo
	// ReusedFrom, on a completion, names the workflow whose output the
	// step reused (the stage cache) instead of running.
	ReusedFrom string
	// Output, with ReusedFrom on a document stage's completion, is the
	// blob holding the output it reused (StepState.Output).
	Output string
	// Offers, on a completion, are the stage cache entries for the
	// outputs the step wrote (RecordStageCache), put in the same write:
	// an output is offered once its step is recorded complete.
	Offers []CachedOutput
	// At is when the change happened; zero means when it is written. A
	// completion recorded with the next step's start keeps its own time.
	At time.Time
	// Workflow, when set, makes the change conditional on the workflow's
	// status too: for a caller that decided from a step item it did not
	// just read (a StepRecorder keeps it between steps). If the status
	// differs, or any step has moved on, nothing is written and the error
	// matches ErrStale.
	Workflow WorkflowStatus
}

// TransitionSteps is the one way a step's status changes: it moves steps
// of one workflow, each from one of its From states to its To, with its own
// TRANSITION# audit item; only those steps' attributes change. What each
// change may also say (Seen, Info, At, Workflow) is described on
// StepChange.
//
// A change whose step is already in To is a retried change that committed
// before: nothing is written for it, and applied is false when nothing at
// all was written. A step in any other state gives an error matching
// ErrStale and table.ErrConditionFailed.
//
// Several changes go in one transaction, each conditional on its step
// still being in Seen: the step runtime closes the segment stages a step
// waits for, records the step before complete and starts the step in one
// write. When a step has moved on since it was read, the changes are
// applied one by one instead, each from the state it is in then.
func (r *Repository) TransitionSteps(ctx context.Context, ref WorkflowRef, changes ...StepChange) (applied bool, err error) {
	var todo []StepChange
	for _, c := range changes {
		if err := validName("step", c.Step); err != nil {
			return false, err
		}
		if c.Seen != c.To {
			todo = append(todo, c)
		}
	}
	oneByOne := func(cs []StepChange) (bool, error) {
		wrote := false
		for _, c := range cs {
			ok, err := r.transitionStepFrom(ctx, ref, c)
			wrote = wrote || ok
			if err != nil {
				return wrote, err
			}
		}
		return wrote, nil
	}
	// A transaction holds the step item's update, one audit item per change
	// and, when a change records info, both workflow items.
	guarded := slices.ContainsFunc(todo, func(c StepChange) bool { return c.Workflow != "" })
	size := len(todo) + 2 + offerCount(todo)
	if !guarded && (len(todo) < 2 || size >= table.MaxTransactItems) {
		return oneByOne(todo)
	}
	if guarded && size >= table.MaxTransactItems {
		return false, fmt.Errorf("pipeline: %d guarded step changes of %s do not fit one transaction", len(todo), ref.WorkflowID)
	}
	var change table.TxUpdate
	var updatedAt table.Set
	var conds table.And
	var workflow WorkflowStatus // the status a guarded change expects
	audits := make([]table.TxAction, 0, len(todo)+2)
	infos := 0
	for _, c := range todo {
		if !slices.Contains(c.From, c.Seen) {
			if guarded {
				return false, fmt.Errorf("%w: step %s of %s was seen %s, not %v", ErrStale, c.Step, ref.WorkflowID, c.Seen, c.From)
			}
			return oneByOne(todo)
		}
		if c.Workflow != "" && workflow == "" {
			workflow = c.Workflow
			conds = append(conds, table.Equals{Path: pathStatus, Value: string(workflow)})
		}
		if c.Info != nil {
			if infos++; infos > 1 {
				return oneByOne(todo) // each workflow item takes one update per transaction
			}
			wf, stepUpdates, err := r.workflowInfoActions(ref, *c.Info)
			if err != nil {
				return false, err
			}
			change.Updates = append(change.Updates, stepUpdates...)
			audits = append(audits, wf...)
		}
		var audit table.TxAction
		updatedAt, audit = r.mergeStepChange(ref.WorkflowID, &change, &conds, c)
		audits = append(audits, audit)
	}
	// Every change sets updated_at; one expression may set it once, to the
	// last change's time.
	change.Key = StepKey(ref.WorkflowID)
	change.Updates = append(change.Updates, updatedAt)
	change.Cond = conds
	offers, err := r.offerActions(todo)
	if err != nil {
		return false, err
	}
	err = r.t.Transact(ctx, append(append([]table.TxAction{change}, audits...), offers...))
	if lostRace(err) && guarded {
		// The caller decides again from a fresh read.
		return false, fmt.Errorf("%w: workflow %s changed since its step item was kept: %v", ErrStale, ref.WorkflowID, err)
	}
	if lostRace(err) {
		return oneByOne(todo)
	}
	if err != nil {
		return false, fmt.Errorf("pipeline: transition steps of %s: %w", ref.WorkflowID, err)
	}
	return true, nil
}

// stepFrom reads the state a step moves from; done when it is already in to
// (a retried change that committed before), ErrStale when it is in a state
// other than from.
func (r *Repository) stepFrom(ctx context.Context, workflowID, step string, from []StepStatus, to StepStatus) (StepStatus, bool, error) {
	st, err := r.stepStatus(ctx, workflowID, step)
	switch {
	case err != nil:
		return "", false, err
	case st == to:
		return "", true, nil
	case !slices.Contains(from, st):
		return "", false, fmt.Errorf("%w: step %s of %s is %s, not %v", ErrStale, step, workflowID, st, from)
	}
	return st, false, nil
}

func (r *Repository) transitionActions(workflowID, step string, from, to StepStatus, errMsg string, when time.Time, reusedFrom, output string) []table.TxAction {
	now := when.UTC()
	if when.IsZero() {
		now = r.now().UTC()
	}
	at := FormatTime(now)
	updates := []table.Update{
		table.Set{Path: stepPath(step, "status"), Value: string(to)},
		setOrRemove(stepPath(step, "error"), errMsg),
		table.Set{Path: pathUpdatedAt, Value: at},
	}
	switch to {
	case StepInProgress:
		// A new attempt starts from no progress, not the last one's.
		updates = append(updates, table.Set{Path: stepPath(step, "started_at"), Value: at}, table.Remove{Path: stepPath(step, "progress")})
	case StepCompleted, StepFailed, StepSkipped:
		updates = append(updates, table.Set{Path: stepPath(step, "ended_at"), Value: at})
	}
	if to != StepInProgress {
		// Only a completion says where its output came from; any other
		// change forgets an earlier attempt's.
		updates = append(updates, setOrRemove(stepPath(step, "reused_from"), reusedFrom), setOrRemove(stepPath(step, "output"), output))
	}
	tr := Transition{ID: NewIDAt(now), WorkflowID: workflowID, Step: step, From: from, To: to, Error: errMsg, At: at, ReusedFrom: reusedFrom}
	return []table.TxAction{
		table.TxUpdate{Key: StepKey(workflowID), Updates: updates, Cond: table.Equals{Path: stepPath(step, "status"), Value: string(from)}},
		r.auditPut(tr, now),
	}
}

// auditPut writes tr's audit item, with the transient items' expiry.
func (r *Repository) auditPut(tr Transition, now time.Time) table.TxAction {
	audit := newItem(TransitionKey(tr.WorkflowID, tr.ID), tr.data())
	if r.transitionTTL > 0 {
		audit[table.AttrTTL] = float64(now.Add(r.transitionTTL).Unix())
	}
	return table.TxPut{Item: audit, Cond: table.NotExists{Path: table.AttrPK}}
}

// stepStatus reads one step's current status.
func (r *Repository) stepStatus(ctx context.Context, workflowID, step string) (StepStatus, error) {
	p, err := r.GetProgress(ctx, workflowID)
	if err != nil {
		return "", err
	}
	st, ok := p.Steps[step]
	if !ok {
		return "", fmt.Errorf("pipeline: workflow %s has no step %q: %w", workflowID, step, ErrNotFound)
	}
	return st.Status, nil
}

// SetWorkflowStatus is the one way a workflow's status changes: it moves
// the workflow from one of the from states to to on both workflow items
// and the step item, in one transaction. The status index entry is
// rewritten, or removed for a completed workflow (the index is sparse: it
// holds only what someone waits on or must look at). A workflow already in
// to gives applied=false, err=nil; one in any other state an error
// matching ErrStale.
//
// A workflow entering in_progress takes one of its project's slots and one
// leaving it gives the slot back, in the same transaction (slotActions);
// only AdmitWorkflow refuses a workflow over the project's limit.
func (r *Repository) SetWorkflowStatus(ctx context.Context, ref WorkflowRef, from []WorkflowStatus, to WorkflowStatus, errMsg string, opts ...StatusOption) (bool, error) {
	var o statusOptions
	for _, opt := range opts {
		opt(&o)
	}
	var todo []StepChange
	for _, c := range o.steps {
		if err := validName("step", c.Step); err != nil {
			return false, err
		}
		switch {
		case c.Info != nil:
			return false, fmt.Errorf("pipeline: a step change with info cannot ride on a status change of %s", ref.WorkflowID)
		case c.Seen == c.To:
		case !slices.Contains(c.From, c.Seen):
			return false, fmt.Errorf("%w: step %s of %s was seen %s, not %v", ErrStale, c.Step, ref.WorkflowID, c.Seen, c.From)
		default:
			todo = append(todo, c)
		}
	}
	if len(todo)+6+offerCount(todo) > table.MaxTransactItems {
		return false, fmt.Errorf("pipeline: %d step changes of %s do not fit one transaction", len(todo), ref.WorkflowID)
	}
	return r.setWorkflowStatus(ctx, ref, from, to, errMsg, false, o.seen, todo)
}

// A StatusOption adds to a SetWorkflowStatus.
type StatusOption func(*statusOptions)

type statusOptions struct {
	seen  *StepProgress
	steps []StepChange
}

// StatusSeen is for a caller that has just read the step item (seen): the
// first attempt works from it instead of reading the item again. When the
// workflow has moved on since, the attempt's conditions fail and the next
// one reads afresh.
func StatusSeen(seen StepProgress) StatusOption {
	return func(o *statusOptions) { o.seen = &seen }
}

// StatusWithSteps applies step changes (as TransitionSteps) in the same
// transaction as the status change: the last step's completion and the
// workflow's outcome in one write. Each change needs Seen among its From
// and no Info. If anything has moved on since they were seen, nothing is
// written and the error matches ErrStale: the caller reads afresh and
// decides again.
func StatusWithSteps(changes ...StepChange) StatusOption {
	return func(o *statusOptions) { o.steps = append(o.steps, changes...) }
}

// withSteps merges step changes into a status change's actions: their
// updates and conditions into its update of the step item, their audit
// items after it.
func (r *Repository) withSteps(actions []table.TxAction, ref WorkflowRef, steps []StepChange) ([]table.TxAction, error) {
	if len(steps) == 0 {
		return actions, nil
	}
	out := slices.Clone(actions)
	for i, a := range out {
		u, ok := a.(table.TxUpdate)
		if !ok || u.Key != StepKey(ref.WorkflowID) {
			continue
		}
		conds := table.And{u.Cond}
		u.Updates = slices.Clone(u.Updates)
		for _, c := range steps {
			_, audit := r.mergeStepChange(ref.WorkflowID, &u, &conds, c) // the status change sets updated_at
			out = append(out, audit)
		}
		u.Cond = conds
		out[i] = u
	}
	offers, err := r.offerActions(steps)
	return append(out, offers...), err
}

// offerCount is how many stage cache entries changes offer.
func offerCount(changes []StepChange) int {
	n := 0
	for _, c := range changes {
		n += len(c.Offers)
	}
	return n
}

// offerActions are the puts of the stage cache entries changes offer
// (offerPuts).
func (r *Repository) offerActions(changes []StepChange) ([]table.TxAction, error) {
	var offers []CachedOutput
	for _, c := range changes {
		offers = append(offers, c.Offers...)
	}
	return r.offerPuts(offers)
}

// mergeStepChange adds step change c to u, an update of the step item of
// several changes at once: its updates but updated_at, which it returns
// for the caller to set once, and its condition to conds. It returns c's
// audit item.
func (r *Repository) mergeStepChange(workflowID string, u *table.TxUpdate, conds *table.And, c StepChange) (updatedAt table.Set, audit table.TxAction) {
	acts := r.transitionActions(workflowID, c.Step, c.Seen, c.To, c.Error, c.At, c.ReusedFrom, c.Output)
	change := acts[0].(table.TxUpdate)
	for _, up := range change.Updates {
		if set, ok := up.(table.Set); ok && set.Path == pathUpdatedAt {
			updatedAt = set
		} else {
			u.Updates = append(u.Updates, up)
		}
	}
	*conds = append(*conds, change.Cond)
	return updatedAt, acts[1]
}

func (r *Repository) setWorkflowStatus(ctx context.Context, ref WorkflowRef, from []WorkflowStatus, to WorkflowStatus, errMsg string, gate bool, seen *StepProgress, steps []StepChange) (bool, error) {
	if len(from) == 0 {
		return false, fmt.Errorf("pipeline: status change of %s with no from state", ref.WorkflowID)
	}
	// The outbox event and the slot change both need the step item: read
	// it once per attempt (a lost race's re-read serves the next attempt).
	progress := func() (StepProgress, error) {
		if seen != nil {
			return *seen, nil
		}
		p, err := r.GetProgress(ctx, ref.WorkflowID)
		if err == nil {
			seen = &p
		}
		return p, err
	}
	// An outcome and its outbox item commit together or not at all.
	event, err := r.outcomeEvent(ctx, ref, from, to, errMsg, progress)
	if err != nil {
		return false, err
	}
	applied := false
	what := func() string { return "workflow " + ref.WorkflowID }
	err = r.retry(ctx, what, func() error {
		slots, err := r.slotActions(ctx, ref, from, to, gate, progress)
		if err != nil {
			return err
		}
		change := NewID()
		actions, err := r.withSteps(r.statusActions(ref, slots.from, to, errMsg, change), ref, steps)
		if err != nil {
			return err
		}
		actions = append(actions, slots.actions...)
		err = r.t.Transact(ctx, withOutcomeEvent(actions, event))
		if err == nil {
			applied = true
			return nil
		}
		if eventPutFailed(err, event) {
			return fmt.Errorf("%w: workflow %s", ErrEventIDTaken, ref.WorkflowID)
		}
		if !lostRace(err) {
			return fmt.Errorf("pipeline: set status of %s: %w", ref.WorkflowID, err)
		}
		seen = nil
		p, perr := progress()
		switch {
		case perr != nil:
			return perr
		case p.Status == to && stepsAt(p, steps):
			// Already so: another writer's change, or this one's, committed
			// by an attempt whose answer was lost and resent by the SDK.
			applied, err = r.madeStatusChange(ctx, ref, change)
			return err
		case len(steps) > 0:
			return fmt.Errorf("%w: workflow %s or its steps changed: %v", ErrStale, ref.WorkflowID, err)
		case !slices.Contains(from, p.Status):
			return fmt.Errorf("%w: workflow %s is %s, not %v", ErrStale, ref.WorkflowID, p.Status, from)
		}
		if gate {
			if full, err := r.notAdmitted(ctx, ref, slots.max); err != nil || full {
				return cmp.Or(err, fmt.Errorf("%w: workflow %s of %s (max %d)", ErrNotAdmitted, ref.WorkflowID, ref.ProjectID, slots.max))
			}
		}
		return errLostRace
	})
	return applied, err
}

// stepsAt reports whether every step change has its To state in p.
func stepsAt(p StepProgress, steps []StepChange) bool {
	for _, c := range steps {
		if p.Steps[c.Step].Status != c.To {
			return false
		}
	}
	return true
}

// madeStatusChange reports whether the workflow's last status change is
// change, the one whose answer may have been lost.
func (r *Repository) madeStatusChange(ctx context.Context, ref WorkflowRef, change string) (bool, error) {
	it, err := r.t.Get(ctx, StepKey(ref.WorkflowID))
	if err != nil {
		return false, fmt.Errorf("pipeline: get step item of %s: %w", ref.WorkflowID, err)
	}
	last, _ := it.Data()[attrStatusChange].(string)
	return last == change, nil
}

// attrStatusChange, on the step item, names the last status change (a
// fresh id each time), so that a writer whose answer was lost can tell
// its own change from another's.
const attrStatusChange = "status_change"

func (r *Repository) statusActions(ref WorkflowRef, from []WorkflowStatus, to WorkflowStatus, errMsg, change string) []table.TxAction {
	now := r.now().UTC()
	fromValues := make([]any, len(from))
	for i, f := range from {
		fromValues[i] = string(f)
	}
	cond := table.In{Path: pathStatus, Values: fromValues}
	wfUpdates := []table.Update{
		table.Set{Path: pathStatus, Value: string(to)},
		setOrRemove(pathError, errMsg),
		table.Set{Path: pathUpdatedAt, Value: now.Format(time.RFC3339Nano)},
	}
	updated := FormatTime(now)
	stepUpdates := []table.Update{
		table.Set{Path: pathStatus, Value: string(to)},
		setOrRemove(pathError, errMsg),
		table.Set{Path: pathUpdatedAt, Value: updated},
		table.Set{Path: "data." + attrStatusChange, Value: change},
	}
	if to == WorkflowCompleted {
		stepUpdates = append(stepUpdates, table.Remove{Path: table.AttrGSI1PK}, table.Remove{Path: table.AttrGSI1SK})
	} else {
		stepUpdates = append(stepUpdates,
			table.Set{Path: table.AttrGSI1PK, Value: StatusIndexPK(StatusShard(ref.WorkflowID))},
			table.Set{Path: table.AttrGSI1SK, Value: StatusIndexSK(to, updated, ref.WorkflowID)})
	}
	return []table.TxAction{
		table.TxUpdate{Key: ProjectWorkflowKey(ref.ProjectID, ref.WorkflowID), Updates: wfUpdates, Cond: cond},
		table.TxUpdate{Key: WorkflowKey(ref.DocumentID, ref.WorkflowID), Updates: wfUpdates, Cond: cond},
		table.TxUpdate{Key: StepKey(ref.WorkflowID), Updates: stepUpdates, Cond: cond},
	}
}

// RecordAttemptFailure writes an audit record of a failed attempt that
// changes no status: a batch of a segment stage whose step stays in
// progress while the state machine retries the batch (or gives up, which
// the workflow's failure then records).
func (r *Repository) RecordAttemptFailure(ctx context.Context, ref WorkflowRef, step, errMsg string) error {
	now := r.now().UTC()
	tr := Transition{ID: NewIDAt(now), WorkflowID: ref.WorkflowID, Step: step, From: StepInProgress, To: StepInProgress, Error: errMsg, At: FormatTime(now)}
	if err := r.t.Transact(ctx, []table.TxAction{r.auditPut(tr, now)}); err != nil {
		return fmt.Errorf("pipeline: record a failed attempt of %s: %w", step, err)
	}
	return nil
}

// ListTransitions returns a workflow's audit records, oldest first.
func (r *Repository) ListTransitions(ctx context.Context, workflowID string) ([]Transition, error) {
	items, err := queryAll(ctx, r.t, table.Query{PK: StepKey(workflowID).PK, SKPrefix: PrefixTransition})
	if err != nil {
		return nil, err
	}
	return decodeAll[Transition](items)
}

// ListByStatus returns up to limit workflows in status, most recently
// updated first, from the status index: every shard is queried at once and
// the results merged. limit <= 0 returns them all. A completed workflow is
// not in the index, so asking for completed returns nothing.
func (r *Repository) ListByStatus(ctx context.Context, status WorkflowStatus, limit int) ([]StepProgress, error) {
	items, err := queryShards(ctx, r.t, limit, true, func(shard int) table.Query {
		return table.Query{Index: table.IndexGSI1, PK: StatusIndexPK(shard), SKPrefix: StatusIndexSKPrefix(status), Reverse: true, Limit: limit}
	})
	if err != nil {
		return nil, err
	}
	return decodeAll[StepProgress](items)
}
