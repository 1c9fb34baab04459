package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// ReviewState is the lifecycle of one review.
type ReviewState string

const (
	ReviewOpen     ReviewState = "open"      // waiting for anyone it is assigned to
	ReviewClaimed  ReviewState = "claimed"   // one reviewer took it; only they decide
	ReviewApproved ReviewState = "approved"  // the pipeline goes on
	ReviewRejected ReviewState = "rejected"  // the workflow fails with the reason
	ReviewTimedOut ReviewState = "timed_out" // past its hard limit, undecided
)

// Decided reports whether a review has its outcome.
func (s ReviewState) Decided() bool {
	return s == ReviewApproved || s == ReviewRejected || s == ReviewTimedOut
}

// Review is a review stage waiting for, or decided by, a person. It lives
// beside its workflow's step item; while undecided it is on GSI1 under
// REVIEW#OPEN (by due date), and once decided under REVIEW#DECIDED until
// the pipeline has taken the decision.
type Review struct {
	ID              string      `json:"id"` // <workflow>.<stage>
	WorkflowID      string      `json:"workflow_id"`
	ProjectID       string      `json:"project_id"`
	DocumentID      string      `json:"document_id"`
	FileName        string      `json:"file_name,omitempty"`
	Stage           string      `json:"stage"`
	Label           string      `json:"label,omitempty"`
	Pipeline        string      `json:"pipeline,omitempty"`
	PipelineVersion int         `json:"pipeline_version,omitempty"`
	State           ReviewState `json:"state"`
	Assign          []string    `json:"assign,omitempty"`
	Group           string      `json:"group,omitempty"`
	Owner           string      `json:"owner,omitempty"` // who claimed it
	CreatedAt       string      `json:"created_at"`
	DueAt           string      `json:"due_at"`
	HardLimitAt     string      `json:"hard_limit_at,omitempty"`
	OnTimeout       string      `json:"on_timeout,omitempty"`
	DueSeconds      int         `json:"due_seconds"`
	HardSeconds     int         `json:"hard_limit_seconds,omitempty"`
	Escalated       bool        `json:"escalated,omitempty"`
	OverdueNotified bool        `json:"overdue_notified,omitempty"`
	// TaskToken is the Step Functions task waiting for the decision;
	// empty on the embedded engine, which parks the workflow instead.
	TaskToken string            `json:"task_token,omitempty"`
	DecidedBy string            `json:"decided_by,omitempty"`
	DecidedAt string            `json:"decided_at,omitempty"`
	Comment   string            `json:"comment,omitempty"`
	Edits     map[string]string `json:"edits,omitempty"`
	// Applied: the pipeline has taken the decision (the stage finished).
	Applied bool `json:"applied,omitempty"`
}

// Ref is the review's workflow.
func (v Review) Ref() WorkflowRef {
	return WorkflowRef{ProjectID: v.ProjectID, DocumentID: v.DocumentID, WorkflowID: v.WorkflowID}
}

// Overdue reports whether an undecided review is past its due date.
func (v Review) Overdue(now time.Time) bool {
	return !v.State.Decided() && v.DueAt < FormatTime(now)
}

// MayDecide reports whether by, a member of groups, may claim or decide
// the review: a claimed one only by its owner; an open one by an
// assignee, or, when it is assigned to a group, by a member. groups is
// nil when membership is unknown (no users file, or a name only typed):
// then anyone may take a group's review, which the audit trail marks as
// unverified.
func (v Review) MayDecide(by string, groups []string) bool {
	switch {
	case v.State == ReviewClaimed:
		return v.Owner == by
	case len(v.Assign) > 0:
		return slices.Contains(v.Assign, by)
	case v.Group != "" && groups != nil:
		return slices.Contains(groups, v.Group)
	}
	return true
}

// ReviewID names the review of a workflow's stage.
func ReviewID(workflowID, stage string) string { return workflowID + "." + stage }

// ParseReviewID splits a review id into workflow and stage.
func ParseReviewID(id string) (workflowID, stage string, err error) {
	w, s, ok := strings.Cut(id, ".")
	if !ok || validID("workflow", w) != nil || validName("stage", s) != nil {
		return "", "", fmt.Errorf("pipeline: %q is not a review id (WORKFLOW.STAGE)", id)
	}
	return w, s, nil
}

// Review errors.
var (
	// ErrReviewDecided: someone else decided (or claimed) it first.
	ErrReviewDecided = fmt.Errorf("pipeline: review already taken: %w", table.ErrConditionFailed)
	// ErrNotReviewer: the review is assigned or claimed to someone else.
	ErrNotReviewer = errors.New("pipeline: not a reviewer of this review")
)

// ReviewRefusal is a review action refused. Reason says why in words for
// the person who tried ("review X was already approved by alice"); Kind is
// ErrReviewDecided or ErrNotReviewer, which errors.Is matches.
type ReviewRefusal struct {
	Kind   error
	Reason string
}

func (e *ReviewRefusal) Error() string { return e.Kind.Error() + ": " + e.Reason }
func (e *ReviewRefusal) Unwrap() error { return e.Kind }

func refuse(kind error, format string, args ...any) error {
	return &ReviewRefusal{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// takenReason says who took a review that is no longer open.
func takenReason(v Review) string {
	if v.State == ReviewClaimed {
		return fmt.Sprintf("review %s is already claimed by %s", v.ID, v.Owner)
	}
	return fmt.Sprintf("review %s was already %s by %s", v.ID, v.State, v.DecidedBy)
}

// OpenReview creates the review of a stage unless it exists, and returns
// it as stored: opening twice (a resumed run, a redelivered task) is one
// review. A task token, when given, is stored on the review, also on one
// that exists and is undecided.
func (r *Repository) OpenReview(ctx context.Context, ref WorkflowRef, st Stage, prog StepProgress, token string) (Review, error) {
	if st.Run.Review == nil {
		return Review{}, fmt.Errorf("pipeline: stage %s is not a review", st.Name)
	}
	if v, err := r.GetReview(ctx, ref.WorkflowID, st.Name); err == nil {
		if token != "" && v.TaskToken != token && !v.State.Decided() {
			return r.setReviewToken(ctx, v, token)
		}
		return v, nil
	} else if !errors.Is(err, ErrNotFound) {
		return Review{}, err
	}
	spec := st.Run.Review
	now := r.now().UTC()
	v := Review{
		ID: ReviewID(ref.WorkflowID, st.Name), WorkflowID: ref.WorkflowID, ProjectID: ref.ProjectID, DocumentID: ref.DocumentID,
		FileName: prog.FileName, Stage: st.Name, Label: st.Label, Pipeline: prog.Pipeline, PipelineVersion: prog.PipelineVersion,
		State: ReviewOpen, Assign: slices.Clone(spec.Assign), Group: spec.Group,
		CreatedAt: FormatTime(now), DueAt: FormatTime(now.Add(time.Duration(spec.DueSeconds) * time.Second)),
		OnTimeout: spec.OnTimeout, DueSeconds: spec.DueSeconds, HardSeconds: spec.HardLimitSeconds, TaskToken: token,
	}
	if spec.HardLimitSeconds > 0 {
		v.HardLimitAt = FormatTime(now.Add(time.Duration(spec.HardLimitSeconds) * time.Second))
	}
	data, err := encode(v)
	if err != nil {
		return Review{}, err
	}
	item := newItem(ReviewKey(ref.WorkflowID, st.Name), data, reviewIndex(v)...)
	err = r.t.Put(ctx, item, table.NotExists{Path: table.AttrPK})
	if errors.Is(err, table.ErrConditionFailed) {
		return r.GetReview(ctx, ref.WorkflowID, st.Name) // opened at the same moment elsewhere
	}
	if err != nil {
		return Review{}, fmt.Errorf("pipeline: open review %s: %w", v.ID, err)
	}
	return v, nil
}

func (r *Repository) setReviewToken(ctx context.Context, v Review, token string) (Review, error) {
	_, err := r.t.Update(ctx, ReviewKey(v.WorkflowID, v.Stage), []table.Update{table.Set{Path: "data.task_token", Value: token}},
		table.In{Path: pathReviewState, Values: []any{string(ReviewOpen), string(ReviewClaimed)}})
	if errors.Is(err, table.ErrConditionFailed) {
		return r.GetReview(ctx, v.WorkflowID, v.Stage) // decided meanwhile
	}
	if err != nil {
		return Review{}, fmt.Errorf("pipeline: review %s: %w", v.ID, err)
	}
	v.TaskToken = token
	return v, nil
}

const pathReviewState = "data.state"

// reviewIndex is a review's GSI attributes for its state: open reviews by
// due date on GSI1 and under their owner (or sole assignee) on GSI2;
// decided ones on GSI1 under REVIEW#DECIDED until applied; applied ones on
// neither.
func reviewIndex(v Review) []string {
	shard := StatusShard(v.WorkflowID)
	switch {
	case v.Applied:
		return nil
	case v.State.Decided():
		return []string{table.AttrGSI1PK, ReviewDecidedIndexPK(shard), table.AttrGSI1SK, ReviewIndexSK(v.DecidedAt, v.WorkflowID)}
	}
	out := []string{table.AttrGSI1PK, ReviewOpenIndexPK(shard), table.AttrGSI1SK, ReviewIndexSK(v.DueAt, v.WorkflowID)}
	owner := v.Owner
	if owner == "" && len(v.Assign) == 1 {
		owner = v.Assign[0]
	}
	if owner != "" {
		out = append(out, table.AttrGSI2PK, ReviewOwnerIndexPK(owner), table.AttrGSI2SK, ReviewIndexSK(v.DueAt, v.WorkflowID))
	}
	return out
}

// GetReview reads one review.
func (r *Repository) GetReview(ctx context.Context, workflowID, stage string) (Review, error) {
	var v Review
	return v, r.get(ctx, ReviewKey(workflowID, stage), &v)
}

// ListWorkflowReviews returns a workflow's reviews in stage-name order.
func (r *Repository) ListWorkflowReviews(ctx context.Context, workflowID string) ([]Review, error) {
	items, err := queryAll(ctx, r.t, table.Query{PK: PrefixWorkflow + workflowID, SKPrefix: PrefixReview})
	if err != nil {
		return nil, err
	}
	return decodeAll[Review](items)
}

// ListOpenReviews returns every undecided review, soonest due first: one
// query per GSI1 shard.
func (r *Repository) ListOpenReviews(ctx context.Context) ([]Review, error) {
	return r.reviewShards(ctx, ReviewOpenIndexPK, table.Query{})
}

// ListOverdueReviews returns the undecided reviews due before now, most
// overdue first: GSI1SK < now on every shard.
func (r *Repository) ListOverdueReviews(ctx context.Context, now time.Time) ([]Review, error) {
	// Due dates start with a digit; the upper bound stops before the
	// first review due at or after now.
	return r.reviewShards(ctx, ReviewOpenIndexPK, table.Query{SKFrom: "0", SKTo: FormatTime(now)})
}

// ListDecidedReviews returns decisions the pipeline has not taken yet.
func (r *Repository) ListDecidedReviews(ctx context.Context) ([]Review, error) {
	return r.reviewShards(ctx, ReviewDecidedIndexPK, table.Query{})
}

// ListOwnerReviews returns the undecided reviews claimed by, or assigned
// to only, name, soonest due first (GSI2).
func (r *Repository) ListOwnerReviews(ctx context.Context, name string) ([]Review, error) {
	items, err := queryAll(ctx, r.t, table.Query{Index: table.IndexGSI2, PK: ReviewOwnerIndexPK(name)})
	if err != nil {
		return nil, err
	}
	return decodeAll[Review](items)
}

func (r *Repository) reviewShards(ctx context.Context, pk func(int) string, base table.Query) ([]Review, error) {
	items, err := queryShards(ctx, r.t, 0, false, func(shard int) table.Query {
		q := base
		q.Index, q.PK = table.IndexGSI1, pk(shard)
		return q
	})
	if err != nil {
		return nil, err
	}
	return decodeAll[Review](items)
}

// ReviewAction is one thing a person does to a review.
type ReviewAction string

const (
	ActionClaim   ReviewAction = "claim"
	ActionRelease ReviewAction = "release"
	ActionApprove ReviewAction = "approve"
	ActionReject  ReviewAction = "reject"
)

// Decision is a reviewer's action with its note and edits.
type Decision struct {
	Action ReviewAction
	By     string
	// Groups are By's groups, from a users file; nil when unknown.
	Groups []string
	// Unverified marks By as a name someone typed rather than an identity
	// a user's own token proved; the audit trail says so.
	Unverified bool
	Comment    string
	// Edits replace stage outputs when approved: "summary" is the document
	// summary's text, "<stage>.<field>" a field of a stage's JSON output.
	Edits map[string]string
}

// ActOnReview applies a reviewer's action as one conditional write plus a
// TRANSITION audit item naming the reviewer. Of two reviewers acting on
// the same review at once exactly one wins; the other gets
// ErrReviewDecided. A claimed review can be released or decided only by
// its owner (ErrNotReviewer).
func (r *Repository) ActOnReview(ctx context.Context, workflowID, stage string, d Decision) (Review, error) {
	if d.By == "" {
		return Review{}, fmt.Errorf("pipeline: a review action needs who takes it")
	}
	if len(d.Edits) > 0 && d.Action != ActionApprove {
		return Review{}, fmt.Errorf("pipeline: only an approval carries edits")
	}
	v, err := r.GetReview(ctx, workflowID, stage)
	if err != nil {
		return Review{}, err
	}
	from, owner := v.State, v.Owner
	var cond table.Cond
	switch d.Action {
	case ActionClaim:
		if from != ReviewOpen {
			return v, refuse(ErrReviewDecided, "%s", takenReason(v))
		}
		v.State, v.Owner = ReviewClaimed, d.By
		cond = table.Equals{Path: pathReviewState, Value: string(ReviewOpen)}
	case ActionRelease:
		if from != ReviewClaimed || v.Owner != d.By {
			if from == ReviewClaimed {
				return v, refuse(ErrNotReviewer, "review %s is claimed by %s; only %s can release it", v.ID, v.Owner, v.Owner)
			}
			return v, refuse(ErrNotReviewer, "review %s is %s, not claimed: there is nothing to release", v.ID, from)
		}
		v.State, v.Owner = ReviewOpen, ""
		cond = table.And{table.Equals{Path: pathReviewState, Value: string(ReviewClaimed)}, table.Equals{Path: "data.owner", Value: d.By}}
	case ActionApprove, ActionReject:
		if from.Decided() {
			return v, refuse(ErrReviewDecided, "%s", takenReason(v))
		}
		v.State = ReviewApproved
		if d.Action == ActionReject {
			v.State = ReviewRejected
		}
		v.DecidedBy, v.DecidedAt, v.Comment, v.Edits = d.By, FormatTime(r.now()), d.Comment, d.Edits
		cond = table.Or{
			table.Equals{Path: pathReviewState, Value: string(ReviewOpen)},
			table.And{table.Equals{Path: pathReviewState, Value: string(ReviewClaimed)}, table.Equals{Path: "data.owner", Value: d.By}},
		}
	default:
		return v, fmt.Errorf("pipeline: unknown review action %q", d.Action)
	}
	if before := (Review{State: from, Owner: owner, Assign: v.Assign, Group: v.Group}); d.Action != ActionRelease && !before.MayDecide(d.By, d.Groups) {
		switch {
		case from == ReviewClaimed:
			return v, refuse(ErrNotReviewer, "review %s is claimed by %s; only %s can decide it until they release it", v.ID, owner, owner)
		case len(v.Assign) > 0:
			return v, refuse(ErrNotReviewer, "review %s is assigned to %s, not %s", v.ID, strings.Join(v.Assign, ", "), d.By)
		}
		return v, refuse(ErrNotReviewer, "review %s is for group %s, which %s is not in", v.ID, v.Group, d.By)
	}
	if err := r.writeReview(ctx, v, cond, from, reviewActor{d.By, d.Unverified}, d.Comment); err != nil {
		if errors.Is(err, table.ErrConditionFailed) {
			return v, refuse(ErrReviewDecided, "review %s changed while this action was made: someone else acted on it first", v.ID)
		}
		return v, err
	}
	return v, nil
}

// writeReview puts v in place of its item under cond, with the audit item
// of the change from → v.State by actor, in one transaction. The put
// rewrites the review's index attributes for its new state. Extra
// actions (an outbox event) commit with it.
// reviewActor is who a review's audit item names.
type reviewActor struct {
	name       string
	unverified bool
}

func (r *Repository) writeReview(ctx context.Context, v Review, cond table.Cond, from ReviewState, actor reviewActor, note string, extra ...table.TxAction) error {
	data, err := encode(v)
	if err != nil {
		return err
	}
	now := r.now().UTC()
	tr := Transition{ID: NewIDAt(now), WorkflowID: v.WorkflowID, Step: v.Stage,
		From: StepStatus("review_" + from), To: StepStatus("review_" + v.State), Error: note, At: FormatTime(now), Actor: actor.name, ActorUnverified: actor.unverified}
	audit, err := entityItem(TransitionKey(v.WorkflowID, tr.ID), tr)
	if err != nil {
		return err
	}
	if r.transitionTTL > 0 {
		audit[table.AttrTTL] = float64(now.Add(r.transitionTTL).Unix())
	}
	actions := append([]table.TxAction{
		table.TxPut{Item: newItem(ReviewKey(v.WorkflowID, v.Stage), data, reviewIndex(v)...), Cond: table.And{table.Exists{Path: table.AttrPK}, cond}},
		table.TxPut{Item: audit, Cond: table.NotExists{Path: table.AttrPK}},
	}, extra...)
	if err := r.t.Transact(ctx, actions); err != nil {
		return fmt.Errorf("pipeline: review %s: %w", v.ID, err)
	}
	return nil
}

// MarkReviewApplied records that the pipeline took a review's decision:
// the review leaves the index. Applying twice is a no-op.
func (r *Repository) MarkReviewApplied(ctx context.Context, workflowID, stage string) error {
	v, err := r.GetReview(ctx, workflowID, stage)
	if err != nil || v.Applied {
		return err
	}
	if !v.State.Decided() {
		return fmt.Errorf("pipeline: review %s is %s, not decided", v.ID, v.State)
	}
	v.Applied = true
	data, err := encode(v)
	if err != nil {
		return err
	}
	err = r.t.Put(ctx, newItem(ReviewKey(workflowID, stage), data), table.Equals{Path: pathReviewState, Value: string(v.State)})
	if err != nil {
		return fmt.Errorf("pipeline: review %s: %w", v.ID, err)
	}
	return nil
}

// ReviewSweep is what one pass over overdue reviews did.
type ReviewSweep struct {
	Announced []Review // newly overdue: a review.overdue event each
	Escalated []Review // past the hard limit: handed on with a new due date
	TimedOut  []Review // past the hard limit: decided as timed out
}

// SweepOverdueReviews reads the overdue reviews (one GSI1 query per
// shard) and, for each, announces it once through the outbox, and past
// its hard limit escalates it once or times it out, as its stage says.
// Each change is a conditional write with its audit item, so two sweeps
// at once do each thing once.
func (r *Repository) SweepOverdueReviews(ctx context.Context) (ReviewSweep, error) {
	var out ReviewSweep
	now := r.now().UTC()
	overdue, err := r.ListOverdueReviews(ctx, now)
	if err != nil {
		return out, err
	}
	at := FormatTime(now)
	for _, v := range overdue {
		cond := table.And{table.Equals{Path: pathReviewState, Value: string(v.State)}, table.Equals{Path: "data.due_at", Value: v.DueAt}}
		from := v.State
		switch {
		case v.HardLimitAt != "" && v.HardLimitAt < at && v.OnTimeout == ReviewEscalate && !v.Escalated:
			// Handed to the whole group, or to anyone when it named people.
			v.Escalated, v.State, v.Owner, v.Assign = true, ReviewOpen, "", nil
			v.DueAt = FormatTime(now.Add(time.Duration(v.DueSeconds) * time.Second))
			v.HardLimitAt = FormatTime(now.Add(time.Duration(v.HardSeconds) * time.Second))
			v.OverdueNotified = false
			if err := r.writeReview(ctx, v, cond, from, reviewActor{}, "escalated: past its hard limit"); err != nil {
				if lostRace(err) {
					continue
				}
				return out, err
			}
			out.Escalated = append(out.Escalated, v)
		case v.HardLimitAt != "" && v.HardLimitAt < at:
			v.State, v.DecidedAt = ReviewTimedOut, at
			v.Comment = "no decision before the hard limit " + v.HardLimitAt
			if err := r.writeReview(ctx, v, cond, from, reviewActor{}, v.Comment); err != nil {
				if lostRace(err) {
					continue
				}
				return out, err
			}
			out.TimedOut = append(out.TimedOut, v)
		case !v.OverdueNotified:
			v.OverdueNotified = true
			ev, err := r.reviewEvent(v, EventReviewOverdue, now)
			if err != nil {
				return out, err
			}
			put := table.TxPut{Item: ev, Cond: table.NotExists{Path: table.AttrPK}}
			cond := append(cond, table.NotEquals{Path: "data.overdue_notified", Value: true})
			if err := r.writeReview(ctx, v, cond, from, reviewActor{}, "overdue since "+v.DueAt, put); err != nil {
				if lostRace(err) {
					continue
				}
				return out, err
			}
			out.Announced = append(out.Announced, v)
		}
	}
	return out, nil
}

// reviewEvent is the outbox item announcing something about a review.
func (r *Repository) reviewEvent(v Review, typ EventType, now time.Time) (table.Item, error) {
	ev := Event{
		ID: r.eventID(now), Type: typ, Time: now, ProjectID: v.ProjectID,
		Document: EventDocument{ID: v.DocumentID, FileName: v.FileName}, WorkflowID: v.WorkflowID,
		Review: &EventReview{ID: v.ID, Stage: v.Stage, DueAt: v.DueAt, Assign: v.Assign, Group: v.Group, Owner: v.Owner},
	}
	if v.Pipeline != "" {
		ev.Pipeline = &EventPipeline{Name: v.Pipeline, Version: v.PipelineVersion}
	}
	data, err := encode(OutboxEntry{Event: ev, Delivery: EventDelivery{State: DeliveryPending}})
	if err != nil {
		return nil, err
	}
	return newItem(EventKey(v.WorkflowID, ev.ID), data,
		table.AttrGSI1PK, OutboxIndexPK(DeliveryPending, StatusShard(v.WorkflowID)),
		table.AttrGSI1SK, ev.ID), nil
}

// EventReview names the review an event is about.
type EventReview struct {
	ID     string   `json:"id"`
	Stage  string   `json:"stage"`
	DueAt  string   `json:"due_at"`
	Assign []string `json:"assign,omitempty"`
	Group  string   `json:"group,omitempty"`
	Owner  string   `json:"owner,omitempty"`
}
