package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Repository errors. Both match table.ErrConditionFailed with errors.Is, so
// callers that only care "the write did not happen" can test for that.
var (
	// ErrAlreadyExists: a create found the item in place.
	ErrAlreadyExists = fmt.Errorf("pipeline: already exists: %w", table.ErrConditionFailed)
	// ErrStale: a status change expected a state the item is no longer in.
	ErrStale = fmt.Errorf("pipeline: stale state: %w", table.ErrConditionFailed)
	// ErrNotFound is table.ErrNotFound, re-exported for callers of the
	// repository.
	ErrNotFound = table.ErrNotFound
)

// maxStatusAttempts bounds the read-and-retry loop of a status change that
// lost a race to a change it can still follow (or to a transaction
// conflict on DynamoDB).
const maxStatusAttempts = 8

// Repository is every read and write of pipeline state, written once on top
// of table.Table. Each method is one Get, one Query (per shard) or one
// transaction; none scans.
type Repository struct {
	t             table.Table
	now           func() time.Time
	transitionTTL time.Duration
}

// RepositoryOption configures a Repository.
type RepositoryOption func(*Repository)

// WithClock injects the clock used for timestamps and ids.
func WithClock(now func() time.Time) RepositoryOption {
	return func(r *Repository) { r.now = now }
}

// WithTransitionTTL makes TRANSITION# audit items expire d after they are
// written. Zero (the default) keeps them forever.
func WithTransitionTTL(d time.Duration) RepositoryOption {
	return func(r *Repository) { r.transitionTTL = d }
}

// NewRepository returns a repository over t.
func NewRepository(t table.Table, opts ...RepositoryOption) *Repository {
	r := &Repository{t: t, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Table returns the table the repository works on.
func (r *Repository) Table() table.Table { return r.t }

// ---- encoding: the one place entities become items and back ----

// encode turns an entity into the map stored under "data". Going through
// JSON makes every number a float64, as every driver reads it back.
func encode(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("pipeline: encode %T: %w", v, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("pipeline: encode %T: %w", v, err)
	}
	return m, nil
}

// decode reads an item's "data" into an entity.
func decode(it table.Item, v any) error {
	b, err := json.Marshal(it.Data())
	if err != nil {
		return fmt.Errorf("pipeline: decode %s: %w", it.Key(), err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("pipeline: decode %s: %w", it.Key(), err)
	}
	return nil
}

// newItem builds an item at key with data and optional extra attributes.
func newItem(key table.Key, data map[string]any, extra ...string) table.Item {
	it := table.Item{table.AttrPK: key.PK, table.AttrSK: key.SK, table.AttrData: data}
	for i := 0; i+1 < len(extra); i += 2 {
		it[extra[i]] = extra[i+1]
	}
	return it
}

func entityItem(key table.Key, v any, extra ...string) (table.Item, error) {
	data, err := encode(v)
	if err != nil {
		return nil, err
	}
	return newItem(key, data, extra...), nil
}

func decodeAll[T any](items []table.Item) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, it := range items {
		var v T
		if err := decode(it, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Attribute paths inside "data".
const (
	pathStatus        = "data.status"
	pathError         = "data.error"
	pathUpdatedAt     = "data.updated_at"
	pathTotalSegments = "data.total_segments"
)

func stepPath(step, field string) string { return "data.steps." + step + "." + field }

// counterPath is the step-item counter a finished segment status counts in.
func counterPath(s SegmentStatus) string {
	switch s {
	case SegmentDone:
		return "data.segments_done"
	case SegmentFailed:
		return "data.segments_failed"
	case SegmentSkipped:
		return "data.segments_skipped"
	}
	return ""
}

// validName rejects names that would break a dotted attribute path.
func validName(kind, name string) error {
	if name == "" || strings.ContainsAny(name, ".#") {
		return fmt.Errorf("pipeline: invalid %s name %q", kind, name)
	}
	return nil
}

func validID(kind, id string) error {
	if id == "" || strings.Contains(id, "#") {
		return fmt.Errorf("pipeline: invalid %s id %q", kind, id)
	}
	return nil
}

// setOrRemove sets path to s, or removes it when s is empty (the entities
// encode empty strings as absent).
func setOrRemove(path, s string) table.Update {
	if s == "" {
		return table.Remove{Path: path}
	}
	return table.Set{Path: path, Value: s}
}

// ---- projects and documents ----

// CreateProject stores a new project; ErrAlreadyExists if the id is taken.
func (r *Repository) CreateProject(ctx context.Context, p Project) error {
	if err := validID("project", p.ID); err != nil {
		return err
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = r.now().UTC()
	}
	it, err := entityItem(ProjectKey(p.ID), p)
	if err != nil {
		return err
	}
	err = r.t.Put(ctx, it, table.NotExists{Path: table.AttrPK})
	if errors.Is(err, table.ErrConditionFailed) {
		return fmt.Errorf("%w: project %s", ErrAlreadyExists, p.ID)
	}
	return err
}

// GetProject reads a project; ErrNotFound if missing.
func (r *Repository) GetProject(ctx context.Context, projectID string) (Project, error) {
	var p Project
	return p, r.get(ctx, ProjectKey(projectID), &p)
}

func (r *Repository) get(ctx context.Context, key table.Key, v any) error {
	it, err := r.t.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("pipeline: get %s: %w", key, err)
	}
	return decode(it, v)
}

// GetDocument reads a document; ErrNotFound if missing.
func (r *Repository) GetDocument(ctx context.Context, projectID, documentID string) (Document, error) {
	var d Document
	return d, r.get(ctx, DocumentKey(projectID, documentID), &d)
}

// ListProjectDocuments pages through a project's documents in id order.
func (r *Repository) ListProjectDocuments(ctx context.Context, projectID string, limit int, pageToken string) ([]Document, string, error) {
	return queryPage[Document](ctx, r.t, table.Query{PK: ProjectKey(projectID).PK, SKPrefix: PrefixDocument, Limit: limit, PageToken: pageToken})
}

// DocumentsByContent returns every document whose bytes hash to sha256hex.
func (r *Repository) DocumentsByContent(ctx context.Context, sha256hex string) ([]Document, error) {
	items, err := queryAll(ctx, r.t, table.Query{Index: table.IndexGSI2, PK: ContentIndexPK(sha256hex), SKPrefix: PrefixDocument})
	if err != nil {
		return nil, err
	}
	return decodeAll[Document](items)
}

// ---- workflows ----

// CreateWorkflow stores, in one transaction, the document (unless it is
// already there with the same content), both workflow items and the step
// item with every stage pending. Either all exist afterwards or none does.
// A workflow id that is taken gives ErrAlreadyExists.
func (r *Repository) CreateWorkflow(ctx context.Context, doc Document, wf Workflow, stages []Stage) error {
	if err := r.checkNewWorkflow(doc, wf, stages); err != nil {
		return err
	}
	now := r.now().UTC()
	if doc.CreatedAt.IsZero() {
		doc.CreatedAt = now
	}
	if wf.CreatedAt.IsZero() {
		wf.CreatedAt = now
	}
	wf.UpdatedAt = now
	wf.Status = WorkflowPending
	wf.Error = ""

	wfData, err := encode(wf)
	if err != nil {
		return err
	}
	if _, ok := wfData["preprocessing"]; !ok {
		// Present from the start so UpdateWorkflowInfo can set one stage's
		// entry without rewriting the others.
		wfData["preprocessing"] = map[string]any{}
	}
	stepItem, err := r.newStepItem(wf, stages, now)
	if err != nil {
		return err
	}
	docItem, err := entityItem(DocumentKey(doc.ProjectID, doc.ID), doc,
		table.AttrGSI2PK, ContentIndexPK(doc.SHA256), table.AttrGSI2SK, PrefixDocument+doc.ID)
	if err != nil {
		return err
	}
	absent := table.NotExists{Path: table.AttrPK}
	rest := []table.TxAction{
		table.TxPut{Item: newItem(ProjectWorkflowKey(wf.ProjectID, wf.ID), wfData), Cond: absent},
		table.TxPut{Item: newItem(WorkflowKey(wf.DocumentID, wf.ID), table.DeepCopy(table.Item(wfData))), Cond: absent},
		table.TxPut{Item: stepItem, Cond: absent},
	}
	for attempt := 0; attempt < maxStatusAttempts; attempt++ {
		docAction, err := r.documentAction(ctx, doc, docItem)
		if err != nil {
			return err
		}
		err = r.t.Transact(ctx, append([]table.TxAction{docAction}, rest...))
		var tx *table.TxCanceledError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &tx) && len(tx.Failed) > 1 && slices.Contains(tx.Failed[1:], true):
			return fmt.Errorf("%w: workflow %s", ErrAlreadyExists, wf.ID)
		case errors.As(err, &tx), errors.Is(err, table.ErrTransactionConflict):
			// The document appeared or vanished between our read and the
			// transaction (a concurrent create): decide again.
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
		default:
			return fmt.Errorf("pipeline: create workflow %s: %w", wf.ID, err)
		}
	}
	return fmt.Errorf("pipeline: create workflow %s: document %s keeps changing: %w", wf.ID, doc.ID, table.ErrTransactionConflict)
}

func (r *Repository) checkNewWorkflow(doc Document, wf Workflow, stages []Stage) error {
	for _, c := range []struct{ kind, id string }{
		{"project", doc.ProjectID}, {"document", doc.ID}, {"workflow", wf.ID},
	} {
		if err := validID(c.kind, c.id); err != nil {
			return err
		}
	}
	if wf.ProjectID != doc.ProjectID || wf.DocumentID != doc.ID {
		return fmt.Errorf("pipeline: workflow %s names project/document %s/%s, document is %s/%s",
			wf.ID, wf.ProjectID, wf.DocumentID, doc.ProjectID, doc.ID)
	}
	if doc.SHA256 == "" {
		return fmt.Errorf("pipeline: document %s has no sha256", doc.ID)
	}
	if len(stages) == 0 {
		return fmt.Errorf("pipeline: workflow %s has no stages", wf.ID)
	}
	for _, s := range stages {
		if err := validName("step", s.Name); err != nil {
			return err
		}
	}
	return nil
}

// documentAction re-uses an existing document (asserting it is still there
// with the same content) or creates it (asserting nobody else just did).
// A plain re-put would overwrite the first upload's fields.
func (r *Repository) documentAction(ctx context.Context, doc Document, docItem table.Item) (table.TxAction, error) {
	key := DocumentKey(doc.ProjectID, doc.ID)
	existing, err := r.t.Get(ctx, key)
	switch {
	case errors.Is(err, table.ErrNotFound):
		return table.TxPut{Item: docItem, Cond: table.NotExists{Path: table.AttrPK}}, nil
	case err != nil:
		return nil, fmt.Errorf("pipeline: get %s: %w", key, err)
	}
	var have Document
	if err := decode(existing, &have); err != nil {
		return nil, err
	}
	if have.SHA256 != doc.SHA256 {
		return nil, fmt.Errorf("%w: document %s exists with different content", ErrAlreadyExists, doc.ID)
	}
	return table.TxCheck{Key: key, Cond: table.Equals{Path: "data.sha256", Value: doc.SHA256}}, nil
}

func (r *Repository) newStepItem(wf Workflow, stages []Stage, now time.Time) (table.Item, error) {
	steps := make(map[string]StepState, len(stages))
	for _, s := range stages {
		steps[s.Name] = StepState{Status: StepPending, Label: s.Label}
	}
	updated := FormatTime(now)
	it, err := entityItem(StepKey(wf.ID), StepProgress{
		WorkflowID:    wf.ID,
		ProjectID:     wf.ProjectID,
		DocumentID:    wf.DocumentID,
		FileName:      wf.FileName,
		Status:        WorkflowPending,
		Steps:         steps,
		TotalSegments: wf.TotalSegments,
		UpdatedAt:     updated,
	}, table.AttrGSI1PK, StatusIndexPK(StatusShard(wf.ID)),
		table.AttrGSI1SK, StatusIndexSK(WorkflowPending, updated, wf.ID))
	return it, err
}

// GetWorkflow reads a workflow's metadata item.
func (r *Repository) GetWorkflow(ctx context.Context, documentID, workflowID string) (Workflow, error) {
	var w Workflow
	return w, r.get(ctx, WorkflowKey(documentID, workflowID), &w)
}

// ListProjectWorkflows pages through a project's workflows, newest first.
func (r *Repository) ListProjectWorkflows(ctx context.Context, projectID string, limit int, pageToken string) ([]Workflow, string, error) {
	return queryPage[Workflow](ctx, r.t, table.Query{PK: ProjectKey(projectID).PK, SKPrefix: PrefixWorkflow, Reverse: true, Limit: limit, PageToken: pageToken})
}

// GetProgress reads the step item of a workflow.
func (r *Repository) GetProgress(ctx context.Context, workflowID string) (StepProgress, error) {
	var p StepProgress
	return p, r.get(ctx, StepKey(workflowID), &p)
}

// WorkflowInfo names workflow fields to set; nil/empty fields are left alone.
type WorkflowInfo struct {
	MIMEType      *string
	TotalSegments *int
	ExecutionID   *string
	// Preprocessing sets these stages' entries, keeping the others.
	Preprocessing map[string]string
}

// UpdateWorkflowInfo sets the given fields on both workflow items (and the
// total on the step item) in one transaction, without touching the others.
func (r *Repository) UpdateWorkflowInfo(ctx context.Context, ref WorkflowRef, info WorkflowInfo) error {
	now := r.now().UTC()
	wfUpdates := []table.Update{table.Set{Path: pathUpdatedAt, Value: now.Format(time.RFC3339Nano)}}
	if info.MIMEType != nil {
		wfUpdates = append(wfUpdates, setOrRemove("data.mime_type", *info.MIMEType))
	}
	if info.ExecutionID != nil {
		wfUpdates = append(wfUpdates, setOrRemove("data.execution_id", *info.ExecutionID))
	}
	for stage, status := range info.Preprocessing {
		if err := validName("stage", stage); err != nil {
			return err
		}
		wfUpdates = append(wfUpdates, table.Set{Path: "data.preprocessing." + stage, Value: status})
	}
	exists := table.Exists{Path: table.AttrPK}
	actions := []table.TxAction{
		table.TxUpdate{Key: ProjectWorkflowKey(ref.ProjectID, ref.WorkflowID), Updates: wfUpdates, Cond: exists},
		table.TxUpdate{Key: WorkflowKey(ref.DocumentID, ref.WorkflowID), Updates: wfUpdates, Cond: exists},
	}
	if info.TotalSegments != nil {
		if *info.TotalSegments < 0 {
			return fmt.Errorf("pipeline: negative total segments %d", *info.TotalSegments)
		}
		total := table.Set{Path: pathTotalSegments, Value: *info.TotalSegments}
		for i := range actions {
			u := actions[i].(table.TxUpdate)
			u.Updates = append(slices.Clone(u.Updates), total)
			actions[i] = u
		}
		actions = append(actions, table.TxUpdate{Key: StepKey(ref.WorkflowID), Updates: []table.Update{total}, Cond: exists})
	}
	err := r.t.Transact(ctx, actions)
	if errors.Is(err, table.ErrConditionFailed) {
		return fmt.Errorf("pipeline: workflow %s: %w", ref.WorkflowID, ErrNotFound)
	}
	return err
}

// ---- step and workflow status ----

// TransitionStep moves one step from one of the from states to to, in one
// transaction with its TRANSITION# audit item. Only that step's attributes
// change. It returns applied=false, err=nil when the step is already in to
// (a retried change that committed before); a step in any other state gives
// an error matching ErrStale and table.ErrConditionFailed.
func (r *Repository) TransitionStep(ctx context.Context, ref WorkflowRef, step string, from []StepStatus, to StepStatus, errMsg string) (bool, error) {
	if err := validName("step", step); err != nil {
		return false, err
	}
	if len(from) == 0 {
		return false, fmt.Errorf("pipeline: transition of %s with no from state", step)
	}
	// With one possible from state the audit record knows it; with several,
	// read the step first so the record says which one it was.
	cur, known := from[0], len(from) == 1
	for attempt := 0; attempt < maxStatusAttempts; attempt++ {
		if !known {
			st, err := r.stepStatus(ctx, ref.WorkflowID, step)
			if err != nil {
				return false, err
			}
			if st == to {
				return false, nil
			}
			if !slices.Contains(from, st) {
				return false, fmt.Errorf("%w: step %s of %s is %s, not %v", ErrStale, step, ref.WorkflowID, st, from)
			}
			cur = st
		}
		actions, err := r.transitionActions(ref.WorkflowID, step, cur, to, errMsg)
		if err != nil {
			return false, err
		}
		err = r.t.Transact(ctx, actions)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, table.ErrConditionFailed) && !errors.Is(err, table.ErrTransactionConflict) {
			return false, fmt.Errorf("pipeline: transition %s of %s: %w", step, ref.WorkflowID, err)
		}
		if errors.Is(err, table.ErrTransactionConflict) {
			if err := backoff(ctx, attempt); err != nil {
				return false, err
			}
		}
		known = false
	}
	return false, fmt.Errorf("pipeline: step %s of %s keeps changing: %w", step, ref.WorkflowID, table.ErrTransactionConflict)
}

func (r *Repository) transitionActions(workflowID, step string, from, to StepStatus, errMsg string) ([]table.TxAction, error) {
	now := r.now().UTC()
	at := FormatTime(now)
	updates := []table.Update{
		table.Set{Path: stepPath(step, "status"), Value: string(to)},
		setOrRemove(stepPath(step, "error"), errMsg),
		table.Set{Path: pathUpdatedAt, Value: at},
	}
	switch to {
	case StepInProgress:
		updates = append(updates, table.Set{Path: stepPath(step, "started_at"), Value: at})
	case StepCompleted, StepFailed, StepSkipped:
		updates = append(updates, table.Set{Path: stepPath(step, "ended_at"), Value: at})
	}
	tr := Transition{ID: NewIDAt(now), WorkflowID: workflowID, Step: step, From: from, To: to, Error: errMsg, At: at}
	audit, err := entityItem(TransitionKey(workflowID, tr.ID), tr)
	if err != nil {
		return nil, err
	}
	if r.transitionTTL > 0 {
		audit[table.AttrTTL] = float64(now.Add(r.transitionTTL).Unix())
	}
	return []table.TxAction{
		table.TxUpdate{Key: StepKey(workflowID), Updates: updates, Cond: table.Equals{Path: stepPath(step, "status"), Value: string(from)}},
		table.TxPut{Item: audit, Cond: table.NotExists{Path: table.AttrPK}},
	}, nil
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

// SetWorkflowStatus moves a workflow from one of the from states to to on
// both workflow items and the step item, in one transaction. The status
// index entry is rewritten, or removed for a completed workflow (the index
// is sparse: it holds only what someone waits on or must look at). The
// idempotency rule is TransitionStep's.
func (r *Repository) SetWorkflowStatus(ctx context.Context, ref WorkflowRef, from []WorkflowStatus, to WorkflowStatus, errMsg string) (bool, error) {
	if len(from) == 0 {
		return false, fmt.Errorf("pipeline: status change of %s with no from state", ref.WorkflowID)
	}
	for attempt := 0; attempt < maxStatusAttempts; attempt++ {
		err := r.t.Transact(ctx, r.statusActions(ref, from, to, errMsg))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, table.ErrConditionFailed) && !errors.Is(err, table.ErrTransactionConflict) {
			return false, fmt.Errorf("pipeline: set status of %s: %w", ref.WorkflowID, err)
		}
		p, err := r.GetProgress(ctx, ref.WorkflowID)
		if err != nil {
			return false, err
		}
		if p.Status == to {
			return false, nil
		}
		if !slices.Contains(from, p.Status) {
			return false, fmt.Errorf("%w: workflow %s is %s, not %v", ErrStale, ref.WorkflowID, p.Status, from)
		}
		if err := backoff(ctx, attempt); err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("pipeline: workflow %s keeps changing: %w", ref.WorkflowID, table.ErrTransactionConflict)
}

func (r *Repository) statusActions(ref WorkflowRef, from []WorkflowStatus, to WorkflowStatus, errMsg string) []table.TxAction {
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
	shards := make([][]table.Item, StatusShards)
	g, gctx := errgroup.WithContext(ctx)
	for shard := range StatusShards {
		g.Go(func() error {
			q := table.Query{Index: table.IndexGSI1, PK: StatusIndexPK(shard), SKPrefix: string(status) + "#", Reverse: true, Limit: limit}
			items, err := queryUpTo(gctx, r.t, q, limit)
			shards[shard] = items
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	merged := slices.Concat(shards...)
	sk := func(it table.Item) string { s, _ := it[table.AttrGSI1SK].(string); return s }
	slices.SortFunc(merged, func(a, b table.Item) int { return strings.Compare(sk(b), sk(a)) })
	if limit > 0 && len(merged) > limit {
		merged = merged[:limit]
	}
	return decodeAll[StepProgress](merged)
}

// ---- segments ----

// SegmentResult is what finishing a segment records; empty fields are left
// as they are, except Error, which is always replaced.
type SegmentResult struct {
	ResultKey string
	Language  string
	Keywords  []string
	Error     string
}

// PutSegments writes segment items, overwriting pending ones with the same
// index and leaving finished ones alone, in transactions of up to
// table.MaxTransactItems items.
func (r *Repository) PutSegments(ctx context.Context, segs []Segment) error {
	now := FormatTime(r.now())
	byKey := make(map[table.Key]int, len(segs))
	var items []table.Item
	for _, s := range segs {
		if err := validID("workflow", s.WorkflowID); err != nil {
			return err
		}
		if s.Index < 0 || s.Index > 999999 {
			return fmt.Errorf("pipeline: segment index %d out of range", s.Index)
		}
		if s.Status == "" {
			s.Status = SegmentPending
		}
		if s.UpdatedAt == "" {
			s.UpdatedAt = now
		}
		it, err := entityItem(SegmentKey(s.WorkflowID, s.Index), s)
		if err != nil {
			return err
		}
		// A transaction may touch an item once: the last write of a
		// duplicated index wins, as it would with separate puts.
		if i, dup := byKey[it.Key()]; dup {
			items[i] = it
			continue
		}
		byKey[it.Key()] = len(items)
		items = append(items, it)
	}
	// A segment that has left pending is never overwritten: a late
	// duplicate of the step that builds segments must not reset work the
	// analysis already counted.
	cond := table.Or{table.NotExists{Path: table.AttrPK}, table.Equals{Path: pathStatus, Value: string(SegmentPending)}}
	for chunk := range slices.Chunk(items, table.MaxTransactItems) {
		actions := make([]table.TxAction, len(chunk))
		for i, it := range chunk {
			actions[i] = table.TxPut{Item: it, Cond: cond}
		}
		err := r.t.Transact(ctx, actions)
		if errors.Is(err, table.ErrConditionFailed) {
			err = r.putSegmentsOneByOne(ctx, chunk, cond)
		}
		if err != nil {
			return fmt.Errorf("pipeline: put segments: %w", err)
		}
	}
	return nil
}

// putSegmentsOneByOne writes the still-pending or missing segments of a
// chunk in which some segment has already finished.
func (r *Repository) putSegmentsOneByOne(ctx context.Context, items []table.Item, cond table.Cond) error {
	for _, it := range items {
		if err := r.t.Put(ctx, it, cond); err != nil && !errors.Is(err, table.ErrConditionFailed) {
			return err
		}
	}
	return nil
}

// GetSegment reads one segment.
func (r *Repository) GetSegment(ctx context.Context, workflowID string, index int) (Segment, error) {
	var s Segment
	return s, r.get(ctx, SegmentKey(workflowID, index), &s)
}

// ListSegments pages through a workflow's segments in index order.
func (r *Repository) ListSegments(ctx context.Context, workflowID string, limit int, pageToken string) ([]Segment, string, error) {
	return queryPage[Segment](ctx, r.t, table.Query{PK: StepKey(workflowID).PK, SKPrefix: PrefixSegment, Limit: limit, PageToken: pageToken})
}

// FailedSegments returns the segments whose last run failed, in index order.
func (r *Repository) FailedSegments(ctx context.Context, workflowID string) ([]Segment, error) {
	var failed []Segment
	token := ""
	for {
		page, next, err := r.ListSegments(ctx, workflowID, 1000, token)
		if err != nil {
			return nil, err
		}
		for _, s := range page {
			if s.Status == SegmentFailed {
				failed = append(failed, s)
			}
		}
		if next == "" {
			return failed, nil
		}
		token = next
	}
}

// FinishSegment records a segment's outcome and counts it on the step item
// in the same transaction, so each segment is counted exactly once however
// often the call is retried or raced. A pending segment may finish in any
// final state; a failed one may be re-run (its failure is uncounted when
// it now succeeds or is skipped). applied is true when the segment's status
// changed. A segment already done or skipped in to returns applied=false; a
// failed segment failing again has its error and result refreshed, also
// with applied=false (a retry and a failing re-run look alike). A segment in
// another final state gives an error matching ErrStale.
func (r *Repository) FinishSegment(ctx context.Context, workflowID string, index int, to SegmentStatus, patch SegmentResult) (bool, error) {
	if counterPath(to) == "" {
		return false, fmt.Errorf("pipeline: segment cannot finish as %q", to)
	}
	for attempt := 0; attempt < maxStatusAttempts; attempt++ {
		cur, err := r.GetSegment(ctx, workflowID, index)
		if err != nil {
			return false, err
		}
		switch {
		case cur.Status == SegmentPending:
		case cur.Status == SegmentFailed:
			// A re-run of a failed segment.
		case cur.Status == to:
			return false, nil
		default:
			return false, fmt.Errorf("%w: segment %d of %s is %s", ErrStale, index, workflowID, cur.Status)
		}
		err = r.t.Transact(ctx, r.finishActions(workflowID, index, cur.Status, to, patch))
		if err == nil {
			// A failed segment failing again refreshes its record but
			// changes no status and no count.
			return cur.Status != to, nil
		}
		if !errors.Is(err, table.ErrConditionFailed) && !errors.Is(err, table.ErrTransactionConflict) {
			return false, fmt.Errorf("pipeline: finish segment %d of %s: %w", index, workflowID, err)
		}
		if errors.Is(err, table.ErrTransactionConflict) {
			if err := backoff(ctx, attempt); err != nil {
				return false, err
			}
		}
	}
	// Out of attempts: report a conflict, which callers retry, never a
	// stale state, which they may take as "someone else finished it".
	return false, fmt.Errorf("pipeline: segment %d of %s keeps changing: %w", index, workflowID, table.ErrTransactionConflict)
}

func (r *Repository) finishActions(workflowID string, index int, from, to SegmentStatus, patch SegmentResult) []table.TxAction {
	segUpdates := []table.Update{
		table.Set{Path: pathStatus, Value: string(to)},
		table.Set{Path: pathUpdatedAt, Value: FormatTime(r.now())},
		setOrRemove(pathError, patch.Error),
	}
	if patch.ResultKey != "" {
		segUpdates = append(segUpdates, table.Set{Path: "data.result_key", Value: patch.ResultKey})
	}
	if patch.Language != "" {
		segUpdates = append(segUpdates, table.Set{Path: "data.language", Value: patch.Language})
	}
	if patch.Keywords != nil {
		segUpdates = append(segUpdates, table.Set{Path: "data.keywords", Value: patch.Keywords})
	}
	var counters []table.Update
	switch {
	case from == SegmentPending:
		counters = []table.Update{table.Add{Path: counterPath(to), Delta: 1}}
	case from == SegmentFailed && to != SegmentFailed:
		counters = []table.Update{table.Add{Path: counterPath(SegmentFailed), Delta: -1}, table.Add{Path: counterPath(to), Delta: 1}}
	}
	actions := []table.TxAction{
		table.TxUpdate{Key: SegmentKey(workflowID, index), Updates: segUpdates, Cond: table.Equals{Path: pathStatus, Value: string(from)}},
	}
	if len(counters) > 0 {
		actions = append(actions, table.TxUpdate{Key: StepKey(workflowID), Updates: counters, Cond: table.Exists{Path: table.AttrPK}})
	}
	return actions
}

// ---- queries ----

// queryPage runs one page of q and decodes it.
func queryPage[T any](ctx context.Context, t table.Table, q table.Query) ([]T, string, error) {
	page, err := t.Query(ctx, q)
	if err != nil {
		return nil, "", fmt.Errorf("pipeline: query %s: %w", q.PK, err)
	}
	out, err := decodeAll[T](page.Items)
	return out, page.Next, err
}

// queryAll follows q's pages to the end.
func queryAll(ctx context.Context, t table.Table, q table.Query) ([]table.Item, error) {
	return queryUpTo(ctx, t, q, 0)
}

// queryUpTo follows q's pages until it has limit items (limit <= 0: all).
func queryUpTo(ctx context.Context, t table.Table, q table.Query, limit int) ([]table.Item, error) {
	var out []table.Item
	for {
		page, err := t.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("pipeline: query %s: %w", q.PK, err)
		}
		out = append(out, page.Items...)
		if page.Next == "" || (limit > 0 && len(out) >= limit) {
			if limit > 0 && len(out) > limit {
				out = out[:limit]
			}
			return out, nil
		}
		q.PageToken = page.Next
	}
}

// backoff waits a short jittered, growing time before another attempt at a
// write that lost a race, so that racers do not collide in lock step.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(1<<min(attempt, 6)) * time.Millisecond
	d = d/2 + rand.N(d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
