package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline/table"
)

// LatestWorkflows is the one rule for which workflow of a document stands
// for it on a pipeline: its newest one there (ids are time-ordered). A
// backfill's workflow is newer than the one it supersedes, so it takes
// its place. It returns, for each document of the project with a
// workflow on the pipeline, that workflow, newest first.
func (r *Repository) LatestWorkflows(ctx context.Context, projectID, pipelineName string) ([]Workflow, error) {
	seen := map[string]bool{}
	var out []Workflow
	for token := ""; ; {
		page, next, err := r.ListProjectWorkflows(ctx, projectID, 1000, token)
		if err != nil {
			return nil, err
		}
		for _, wf := range page {
			if wf.Pipeline != pipelineName || seen[wf.DocumentID] {
				continue
			}
			seen[wf.DocumentID] = true
			out = append(out, wf)
		}
		if token = next; token == "" {
			return out, nil
		}
	}
}

// BackfillFilter chooses the documents a backfill moves: by the outcome
// of their latest workflow (Status: completed, failed or "" for any) and
// by when that workflow started (Since; zero for any time).
type BackfillFilter struct {
	Status WorkflowStatus
	Since  time.Time
}

// BackfillItem is one document of a backfill: the workflow it supersedes
// and, once started, the one on the target version.
type BackfillItem struct {
	Previous Workflow
	// Target is the document's workflow on the target version: started by
	// this backfill, or by an earlier one that did not finish (Resumed).
	Target  *Workflow
	Resumed bool
}

// PlanBackfill lists the documents of a project whose latest workflow on
// pipeline name is on another version than version and matches f, and
// those a backfill onto version started but did not finish (a process
// killed midway): those go on where they are, nothing runs twice.
func (r *Repository) PlanBackfill(ctx context.Context, projectID, name string, version int, f BackfillFilter) ([]BackfillItem, error) {
	latest, err := r.LatestWorkflows(ctx, projectID, name)
	if err != nil {
		return nil, err
	}
	var items []BackfillItem
	for _, wf := range latest {
		if wf.PipelineVersion == version {
			if wf.Supersedes != "" && !wf.Status.Final() {
				prev, err := r.GetWorkflow(ctx, wf.DocumentID, wf.Supersedes)
				if err != nil {
					return nil, err
				}
				target := wf
				items = append(items, BackfillItem{Previous: prev, Target: &target, Resumed: true})
			}
			continue
		}
		if !f.matches(wf) {
			continue
		}
		items = append(items, BackfillItem{Previous: wf})
	}
	slices.Reverse(items) // oldest first: the order the documents came in
	return items, nil
}

func (f BackfillFilter) matches(wf Workflow) bool {
	if f.Status != "" && wf.Status != f.Status {
		return false
	}
	if !wf.Status.Final() {
		return false // still running on its version
	}
	return f.Since.IsZero() || !wf.CreatedAt.Before(f.Since)
}

// StartBackfillWorkflow creates the workflow of prev's document on
// version of prev's pipeline, linked both ways to prev. It is pending:
// the caller starts it through its admission.
func (r *Repository) StartBackfillWorkflow(ctx context.Context, prev Workflow, version int, stages []Stage, noCache bool) (Workflow, error) {
	doc, err := r.GetDocument(ctx, prev.ProjectID, prev.DocumentID)
	if err != nil {
		return Workflow{}, fmt.Errorf("pipeline: backfill document %s: %w", prev.DocumentID, err)
	}
	wf := Workflow{
		ID: NewID(), ProjectID: prev.ProjectID, DocumentID: prev.DocumentID,
		FileURI: prev.FileURI, FileName: prev.FileName,
		Pipeline: prev.Pipeline, PipelineVersion: version, NoCache: noCache,
		Supersedes: prev.ID,
	}
	if err := r.CreateWorkflow(ctx, doc, wf, stages); err != nil {
		return Workflow{}, err
	}
	return r.GetWorkflow(ctx, wf.DocumentID, wf.ID)
}

// AnnounceBackfill puts a backfill.completed event in the outbox, kept
// under the backfill's id (an id like a workflow's: the relay addresses
// every event by the id it is kept under), for the project's sinks.
func (r *Repository) AnnounceBackfill(ctx context.Context, projectID, name string, version int, b EventBackfill) (Event, error) {
	if err := validID("backfill", b.ID); err != nil {
		return Event{}, err
	}
	now := r.now().UTC()
	ev := Event{
		ID: r.eventID(now), Type: EventBackfillCompleted, Time: now, ProjectID: projectID,
		WorkflowID: b.ID, Pipeline: &EventPipeline{Name: name, Version: version}, Backfill: &b,
	}
	data, err := encode(OutboxEntry{Event: ev, Delivery: EventDelivery{State: DeliveryPending}})
	if err != nil {
		return Event{}, err
	}
	it := newItem(EventKey(b.ID, ev.ID), data,
		table.AttrGSI1PK, OutboxIndexPK(DeliveryPending, StatusShard(b.ID)), table.AttrGSI1SK, ev.ID)
	if err := r.t.Put(ctx, it, table.NotExists{Path: table.AttrPK}); err != nil {
		return Event{}, fmt.Errorf("pipeline: announce backfill %s: %w", b.ID, err)
	}
	return ev, nil
}

// StageForecast is what a backfill expects of one stage of a document.
type StageForecast struct {
	Stage  string
	Reused bool
}

// ForecastStages predicts, for a document whose workflow prev ran
// prevDef, which stages of def a new workflow would run and which it
// would reuse: a stage is reused when the cache may keep it
// (StageCached), it completed in prev, and neither it nor any stage it
// depends on differs between the versions (NewCacheKey's definition
// part), so its inputs are the same. It is a forecast from the
// definitions: a stage whose output differs run to run may still run.
func ForecastStages(prevDef, def Definition, prev StepProgress, cacheOff bool) []StageForecast {
	same := map[string]bool{}
	var out []StageForecast
	for _, st := range def.Stages {
		old, ok := prevDef.Stage(st.Name)
		s := ok && NewCacheKey(old, "").Sum() == NewCacheKey(st, "").Sum()
		for _, n := range st.Needs {
			s = s && same[n]
		}
		same[st.Name] = s
		reused := s && !cacheOff && StageCached(st) && prev.Steps[st.Name].Status == StepCompleted
		out = append(out, StageForecast{Stage: st.Name, Reused: reused})
	}
	return out
}

// StageCached says whether the stage cache keeps st's outputs: users'
// stages, the segment analyzer, AI analyses at segment scope, the
// extraction (format_parser, with what ocr adds) and the graph and
// summary built from the analysis, unless the stage says cache: false.
// The other builtins run every time.
func StageCached(st Stage) bool {
	if st.NoCache {
		return false
	}
	switch st.Run.Kind() {
	case RunCommand, RunHTTP, RunLambda:
		return true
	case RunBuiltin:
		return slices.Contains([]string{StepSegmentAnalyzer, StepFormatParser, StepGraphBuilder, StepDocumentSummarizer}, st.Run.Builtin) ||
			st.Scope == ScopeSegment && slices.Contains(AIBuiltins, st.Run.Builtin)
	}
	return false
}

// CreateBackfillWorkflows gives every item without one its workflow on
// version (StartBackfillWorkflow), in place: afterwards each item's
// Target is the workflow to start. The documents are independent, so
// several are created at once: their writes overlap (and SQLite's one
// writer commits them together).
func (r *Repository) CreateBackfillWorkflows(ctx context.Context, items []BackfillItem, version int, stages []Stage, noCache bool) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createBackfillsAtOnce)
	for i := range items {
		if items[i].Target != nil {
			continue
		}
		g.Go(func() error {
			wf, err := r.StartBackfillWorkflow(gctx, items[i].Previous, version, stages, noCache)
			if err != nil {
				return err
			}
			items[i].Target = &wf
			return nil
		})
	}
	return g.Wait()
}

// createBackfillsAtOnce is how many backfill workflows are created at
// once.
const createBackfillsAtOnce = 8
