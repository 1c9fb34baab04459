package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// CreateWorkflow stores, in one transaction, the document (unless it is
// already there with the same content), both workflow items and the step
// item with every stage pending. Either all exist afterwards or none does.
// A workflow id that is taken gives ErrAlreadyExists. The pipeline version
// the workflow names (wf.Pipeline, wf.PipelineVersion) is recorded on all
// three and never changes afterwards; the project's workflow item is also
// listed under its pipeline on GSI2 (ListPipelineWorkflows).
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
		table.TxPut{Item: newItem(ProjectWorkflowKey(wf.ProjectID, wf.ID), wfData, pipelineIndex(wf)...), Cond: absent},
		table.TxPut{Item: newItem(WorkflowKey(wf.DocumentID, wf.ID), table.DeepCopy(table.Item(wfData))), Cond: absent},
		table.TxPut{Item: stepItem, Cond: absent},
	}
	if old := wf.Supersedes; old != "" {
		// Both ends of the link in the same write: the superseded
		// workflow must exist and not be superseded already.
		link := []table.Update{table.Set{Path: "data.superseded_by", Value: wf.ID}}
		free := table.And{table.Exists{Path: table.AttrPK}, table.NotExists{Path: "data.superseded_by"}}
		rest = append(rest,
			table.TxUpdate{Key: ProjectWorkflowKey(wf.ProjectID, old), Updates: link, Cond: free},
			table.TxUpdate{Key: WorkflowKey(wf.DocumentID, old), Updates: link, Cond: free})
	}
	what := func() string { return fmt.Sprintf("create workflow %s: document %s", wf.ID, doc.ID) }
	return r.retry(ctx, what, func() error {
		docAction, err := r.documentAction(ctx, doc, docItem)
		if err != nil {
			return err
		}
		err = r.t.Transact(ctx, append([]table.TxAction{docAction}, rest...))
		var tx *table.TxCanceledError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &tx) && len(tx.Failed) > 1 && slices.Contains(tx.Failed[1:min(4, len(tx.Failed))], true):
			return fmt.Errorf("%w: workflow %s", ErrAlreadyExists, wf.ID)
		case errors.As(err, &tx) && len(tx.Failed) > 4 && slices.Contains(tx.Failed[4:], true):
			return fmt.Errorf("%w: workflow %s of document %s is missing or already superseded", ErrStale, wf.Supersedes, doc.ID)
		case errors.As(err, &tx), errors.Is(err, table.ErrTransactionConflict):
			// The document appeared or vanished between our read and the
			// transaction (a concurrent create): decide again.
			return errLostRace
		default:
			return fmt.Errorf("pipeline: create workflow %s: %w", wf.ID, err)
		}
	})
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
	if wf.Pipeline != "" {
		if err := validName("pipeline", wf.Pipeline); err != nil {
			return err
		}
	}
	if wf.PipelineVersion < 0 || wf.PipelineVersion > 0 && wf.Pipeline == "" {
		return fmt.Errorf("pipeline: workflow %s names pipeline version %d of pipeline %q", wf.ID, wf.PipelineVersion, wf.Pipeline)
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
		WorkflowID:      wf.ID,
		ProjectID:       wf.ProjectID,
		DocumentID:      wf.DocumentID,
		FileName:        wf.FileName,
		Status:          WorkflowPending,
		Steps:           steps,
		TotalSegments:   wf.TotalSegments,
		Pipeline:        wf.Pipeline,
		PipelineVersion: wf.PipelineVersion,
		NoCache:         wf.NoCache,
		UpdatedAt:       updated,
	}, table.AttrGSI1PK, StatusIndexPK(StatusShard(wf.ID)),
		table.AttrGSI1SK, StatusIndexSK(WorkflowPending, updated, wf.ID))
	return it, err
}

// pipelineIndex puts a workflow that names its pipeline on GSI2 under
// PIPELINE#<name>, newest first by its time-ordered id.
func pipelineIndex(wf Workflow) []string {
	if wf.Pipeline == "" {
		return nil
	}
	return []string{table.AttrGSI2PK, PipelineIndexPK(wf.Pipeline), table.AttrGSI2SK, PrefixWorkflow + wf.ID}
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
	actions, stepUpdates, err := r.workflowInfoActions(ref, info)
	if err != nil {
		return err
	}
	if len(stepUpdates) > 0 {
		actions = append(actions, table.TxUpdate{Key: StepKey(ref.WorkflowID), Updates: stepUpdates, Cond: table.Exists{Path: table.AttrPK}})
	}
	err = r.t.Transact(ctx, actions)
	if errors.Is(err, table.ErrConditionFailed) {
		return fmt.Errorf("pipeline: workflow %s: %w", ref.WorkflowID, ErrNotFound)
	}
	return err
}

// workflowInfoActions returns the updates of both workflow items that
// record info, and those the step item needs (the segment total), for the
// caller to put into its own update of that item.
func (r *Repository) workflowInfoActions(ref WorkflowRef, info WorkflowInfo) ([]table.TxAction, []table.Update, error) {
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
			return nil, nil, err
		}
		wfUpdates = append(wfUpdates, table.Set{Path: "data.preprocessing." + stage, Value: status})
	}
	var stepUpdates []table.Update
	if info.TotalSegments != nil {
		if *info.TotalSegments < 0 {
			return nil, nil, fmt.Errorf("pipeline: negative total segments %d", *info.TotalSegments)
		}
		total := table.Set{Path: pathTotalSegments, Value: *info.TotalSegments}
		wfUpdates = append(wfUpdates, total)
		stepUpdates = append(stepUpdates, total)
	}
	exists := table.Exists{Path: table.AttrPK}
	return []table.TxAction{
		table.TxUpdate{Key: ProjectWorkflowKey(ref.ProjectID, ref.WorkflowID), Updates: wfUpdates, Cond: exists},
		table.TxUpdate{Key: WorkflowKey(ref.DocumentID, ref.WorkflowID), Updates: wfUpdates, Cond: exists},
	}, stepUpdates, nil
}

// LatestDocumentWorkflow returns the workflow that stands for a document
// where no workflow is named (show, status and the dashboard given a
// document): its newest, which a backfill's workflow is over the one it
// supersedes (ids are time-ordered). found is false for a document with
// no workflow, or no such document.
func (r *Repository) LatestDocumentWorkflow(ctx context.Context, documentID string) (wf Workflow, found bool, err error) {
	if validID("document", documentID) != nil {
		return Workflow{}, false, nil // no document has that id
	}
	page, err := r.t.Query(ctx, table.Query{PK: PrefixDocument + documentID, SKPrefix: PrefixWorkflow, Reverse: true, Limit: 1})
	if err != nil || len(page.Items) == 0 {
		return Workflow{}, false, err
	}
	wfs, err := decodeAll[Workflow](page.Items)
	if err != nil {
		return Workflow{}, false, err
	}
	return wfs[0], true, nil
}

// ListDocumentWorkflows returns a document's workflows, newest first.
func (r *Repository) ListDocumentWorkflows(ctx context.Context, documentID string) ([]Workflow, error) {
	items, err := queryAll(ctx, r.t, table.Query{PK: PrefixDocument + documentID, SKPrefix: PrefixWorkflow, Reverse: true})
	if err != nil {
		return nil, err
	}
	return decodeAll[Workflow](items)
}
