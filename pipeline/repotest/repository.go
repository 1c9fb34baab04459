package repotest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/metered"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

var repositoryTests = []struct {
	name string
	fn   func(t *testing.T, tb table.Table, cfg tabletest.Config)
}{
	{"Projects", testProjects},
	{"CreateWorkflow", testCreateWorkflow},
	{"CreateWorkflowTwice", testCreateWorkflowTwice},
	{"CreateWorkflowAllOrNothing", testCreateWorkflowAtomic},
	{"ListProjectDocuments", testListProjectDocuments},
	{"ListProjectWorkflowsNewestFirst", testListProjectWorkflows},
	{"ListRecentAcrossProjects", testListRecent},
	{"IndexOlderProject", testIndexOlderProject},
	{"TransitionRace", testTransitionRace},
	{"TransitionSequence", testTransitionSequence},
	{"TransitionFromSeen", testTransitionFromSeen},
	{"StepProgress", testStepProgress},
	{"TransitionStepsInParallel", testTransitionParallelSteps},
	{"TransitionMissing", testTransitionMissing},
	{"TransitionTTL", testTransitionTTL},
	{"WorkflowStatusIndex", testWorkflowStatus},
	{"WorkflowStatusSeen", testWorkflowStatusSeen},
	{"WorkflowStatusRace", testWorkflowStatusRace},
	{"ListByStatusOrder", testListByStatusOrder},
	{"UpdateWorkflowInfo", testUpdateWorkflowInfo},
	{"StepChangeWithInfo", testStepChangeWithInfo},
	{"TransitionSteps", testTransitionSteps},
	{"StatusWithSteps", testStatusWithSteps},
	{"SegmentsPaging", testSegmentsPaging},
	{"FinishSegmentRace", testFinishSegmentRace},
	{"FinishSegmentRerun", testFinishSegmentRerun},
	{"SegmentOutcomeRace", testSegmentOutcomeRace},
	{"FinishSegmentsBatch", testFinishSegmentsBatch},
	{"FinishSegmentsFromStale", testFinishSegmentsFromStale},
	{"PutSegmentsKeepsFinished", testPutSegmentsKeepsFinished},
	{"DocumentWorkflows", testDocumentWorkflows},
}

// fixture is one freshly created workflow.
type fixture struct {
	repo *pipeline.Repository
	doc  pipeline.Document
	wf   pipeline.Workflow
	ref  pipeline.WorkflowRef
}

func stages() []pipeline.Stage { return pipelinefile.Default().Stages }

func newDocument(projectID, sha string) pipeline.Document {
	id := pipeline.NewID()
	return pipeline.Document{
		ProjectID: projectID, ID: id, FileName: "report-" + id + ".pdf", FileURI: "file:///tmp/report.pdf",
		BlobKey: projectID + "/" + id + "/source", SHA256: sha, Size: 1234,
	}
}

func newWorkflowFor(doc pipeline.Document) pipeline.Workflow {
	return pipeline.Workflow{ID: pipeline.NewID(), ProjectID: doc.ProjectID, DocumentID: doc.ID, FileURI: doc.FileURI, FileName: doc.FileName}
}

func refOf(wf pipeline.Workflow) pipeline.WorkflowRef {
	return pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
}

func newSHA() string { return fmt.Sprintf("%064x", pipeline.NewID()) }

// setup creates a project, a document and a workflow on repo.
func setup(t *testing.T, repo *pipeline.Repository) fixture {
	t.Helper()
	projectID := "proj" + pipeline.NewID()
	doc := newDocument(projectID, newSHA())
	wf := newWorkflowFor(doc)
	if err := repo.CreateWorkflow(t.Context(), doc, wf, stages()); err != nil {
		t.Fatalf("CreateWorkflow: %v", err)
	}
	return fixture{repo: repo, doc: doc, wf: wf, ref: refOf(wf)}
}

// setupSegments is setup with n pending segments in the workflow.
func setupSegments(t *testing.T, tb table.Table, n int) (context.Context, *pipeline.Repository, fixture) {
	t.Helper()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	if err := repo.PutSegments(t.Context(), makeSegments(f.wf.ID, 1, n)); err != nil {
		t.Fatal(err)
	}
	return t.Context(), repo, f
}

func progress(t *testing.T, repo *pipeline.Repository, wfID string) pipeline.StepProgress {
	t.Helper()
	p, err := repo.GetProgress(t.Context(), wfID)
	if err != nil {
		t.Fatalf("GetProgress: %v", err)
	}
	return p
}

func wantStale(t *testing.T, what string, applied bool, err error) {
	t.Helper()
	if applied || !errors.Is(err, table.ErrConditionFailed) || !errors.Is(err, pipeline.ErrStale) {
		t.Fatalf("%s: applied=%v err=%v, want a stale-state error", what, applied, err)
	}
}

func byStatusIDs(t *testing.T, repo *pipeline.Repository, s pipeline.WorkflowStatus) []string {
	t.Helper()
	list, err := repo.ListByStatus(t.Context(), s, 0)
	if err != nil {
		t.Fatalf("ListByStatus(%s): %v", s, err)
	}
	ids := make([]string, len(list))
	for i, p := range list {
		if p.Status != s {
			t.Fatalf("ListByStatus(%s) returned %s in %s", s, p.WorkflowID, p.Status)
		}
		ids[i] = p.WorkflowID
	}
	return ids
}

// ---- tests ----

func testProjects(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	p := pipeline.Project{ID: "proj" + pipeline.NewID(), Name: "Annual reports"}
	if err := repo.CreateProject(ctx, p); err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	err := repo.CreateProject(ctx, pipeline.Project{ID: p.ID, Name: "other"})
	if !errors.Is(err, pipeline.ErrAlreadyExists) || !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("second CreateProject: err = %v, want ErrAlreadyExists", err)
	}
	got, err := repo.GetProject(ctx, p.ID)
	if err != nil || got.Name != p.Name || got.ID != p.ID || got.CreatedAt.IsZero() {
		t.Fatalf("GetProject = %+v, %v", got, err)
	}
	if _, err := repo.GetProject(ctx, "proj"+pipeline.NewID()); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("GetProject of a missing project: err = %v", err)
	}
}

func testCreateWorkflow(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	now := time.Date(2031, 3, 4, 5, 6, 7, 890000000, time.UTC)
	repo := pipeline.NewRepository(tb, pipeline.WithClock(func() time.Time { return now }))
	projectID := "proj" + pipeline.NewID()
	doc := newDocument(projectID, newSHA())
	wf := newWorkflowFor(doc)
	wf.TotalSegments = 3
	wf.Status = pipeline.WorkflowCompleted // ignored: a new workflow is pending
	if err := repo.CreateWorkflow(ctx, doc, wf, stages()); err != nil {
		t.Fatalf("CreateWorkflow: %v", err)
	}

	gotDoc, err := repo.GetDocument(ctx, projectID, doc.ID)
	if err != nil {
		t.Fatalf("GetDocument: %v", err)
	}
	doc.CreatedAt = now
	if !gotDoc.CreatedAt.Equal(now) || gotDoc.SHA256 != doc.SHA256 || gotDoc.FileName != doc.FileName || gotDoc.Size != doc.Size || gotDoc.BlobKey != doc.BlobKey {
		t.Fatalf("GetDocument = %+v, want %+v", gotDoc, doc)
	}
	byContent, err := repo.DocumentsByContent(ctx, doc.SHA256)
	if err != nil || len(byContent) != 1 || byContent[0].ID != doc.ID {
		t.Fatalf("DocumentsByContent = %+v, %v", byContent, err)
	}

	gotWF, err := repo.GetWorkflow(ctx, doc.ID, wf.ID)
	if err != nil {
		t.Fatalf("GetWorkflow: %v", err)
	}
	if gotWF.Status != pipeline.WorkflowPending || gotWF.ProjectID != projectID || gotWF.FileName != doc.FileName ||
		gotWF.TotalSegments != 3 || !gotWF.CreatedAt.Equal(now) || !gotWF.UpdatedAt.Equal(now) {
		t.Fatalf("GetWorkflow = %+v", gotWF)
	}
	listed, _, err := repo.ListProjectWorkflows(ctx, projectID, 10, "")
	if err != nil || len(listed) != 1 || listed[0].ID != wf.ID || listed[0].Status != pipeline.WorkflowPending {
		t.Fatalf("ListProjectWorkflows = %+v, %v", listed, err)
	}

	p := progress(t, repo, wf.ID)
	if p.WorkflowID != wf.ID || p.ProjectID != projectID || p.DocumentID != doc.ID || p.FileName != doc.FileName ||
		p.Status != pipeline.WorkflowPending || p.TotalSegments != 3 || p.SegmentsDone != 0 || p.SegmentsFailed != 0 ||
		p.SegmentsSkipped != 0 || p.UpdatedAt != pipeline.FormatTime(now) {
		t.Fatalf("GetProgress = %+v", p)
	}
	if len(p.Steps) != len(stages()) {
		t.Fatalf("step item has %d steps, want %d", len(p.Steps), len(stages()))
	}
	for _, s := range stages() {
		if st := p.Steps[s.Name]; st.Status != pipeline.StepPending || st.Label != s.Label || st.StartedAt != "" {
			t.Errorf("step %s = %+v, want pending with label %q", s.Name, st, s.Label)
		}
	}
	if !slices.Contains(byStatusIDs(t, repo, pipeline.WorkflowPending), wf.ID) {
		t.Fatalf("a new workflow is not in the pending index")
	}
	if trs, err := repo.ListTransitions(ctx, wf.ID); err != nil || len(trs) != 0 {
		t.Fatalf("ListTransitions of a new workflow = %v, %v", trs, err)
	}
}

func testCreateWorkflowTwice(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	err := repo.CreateWorkflow(ctx, f.doc, f.wf, stages())
	if !errors.Is(err, pipeline.ErrAlreadyExists) || !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("second create of one workflow: err = %v, want ErrAlreadyExists", err)
	}
	// A second workflow of the same document reuses the document as it is.
	orig, err := repo.GetDocument(ctx, f.doc.ProjectID, f.doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	again := f.doc
	again.FileName = "renamed.pdf"
	again.CreatedAt = time.Time{}
	wf2 := newWorkflowFor(again)
	if err := repo.CreateWorkflow(ctx, again, wf2, stages()); err != nil {
		t.Fatalf("second workflow of one document: %v", err)
	}
	got, err := repo.GetDocument(ctx, f.doc.ProjectID, f.doc.ID)
	if err != nil || got.FileName != orig.FileName || !got.CreatedAt.Equal(orig.CreatedAt) {
		t.Fatalf("document after second workflow = %+v, %v; want unchanged %+v", got, err, orig)
	}
	if _, err := repo.GetProgress(ctx, wf2.ID); err != nil {
		t.Fatalf("second workflow's step item: %v", err)
	}
	// The same document id with other content is a conflict.
	other := f.doc
	other.SHA256 = newSHA()
	if err := repo.CreateWorkflow(ctx, other, newWorkflowFor(other), stages()); !errors.Is(err, pipeline.ErrAlreadyExists) {
		t.Fatalf("same document id, other content: err = %v, want ErrAlreadyExists", err)
	}
	// Another document with the same bytes is found by content.
	twin := newDocument(f.doc.ProjectID, f.doc.SHA256)
	if err := repo.CreateWorkflow(ctx, twin, newWorkflowFor(twin), stages()); err != nil {
		t.Fatal(err)
	}
	docs, err := repo.DocumentsByContent(ctx, f.doc.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	if want := []string{f.doc.ID, twin.ID}; !slices.Equal(ids, want) {
		t.Fatalf("DocumentsByContent = %v, want %v", ids, want)
	}
}

// testCreateWorkflowAtomic: one conflicting item makes the whole create
// fail, leaving none of its items behind.
func testCreateWorkflowAtomic(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	for _, conflict := range []func(wf pipeline.Workflow) table.Key{
		func(wf pipeline.Workflow) table.Key { return pipeline.WorkflowKey(wf.DocumentID, wf.ID) },
		func(wf pipeline.Workflow) table.Key { return pipeline.ProjectWorkflowKey(wf.ProjectID, wf.ID) },
		func(wf pipeline.Workflow) table.Key { return pipeline.StepKey(wf.ID) },
	} {
		projectID := "proj" + pipeline.NewID()
		doc := newDocument(projectID, newSHA())
		wf := newWorkflowFor(doc)
		k := conflict(wf)
		tabletest.MustPut(t, tb, table.Item{table.AttrPK: k.PK, table.AttrSK: k.SK, "data": map[string]any{"squatter": true}})

		err := repo.CreateWorkflow(ctx, doc, wf, stages())
		if !errors.Is(err, pipeline.ErrAlreadyExists) {
			t.Fatalf("create over %s: err = %v, want ErrAlreadyExists", k, err)
		}
		for _, key := range []table.Key{
			pipeline.DocumentKey(projectID, doc.ID), pipeline.WorkflowKey(doc.ID, wf.ID),
			pipeline.ProjectWorkflowKey(projectID, wf.ID), pipeline.StepKey(wf.ID),
		} {
			if key == k {
				if it := tabletest.MustGet(t, tb, key); it.Data()["squatter"] != true {
					t.Fatalf("the conflicting item %s was overwritten: %v", key, it)
				}
				continue
			}
			tabletest.WantMissing(t, tb, key)
		}
		if docs, err := repo.DocumentsByContent(ctx, doc.SHA256); err != nil || len(docs) != 0 {
			t.Fatalf("failed create left documents %v, %v", docs, err)
		}
	}
}

func testListProjectDocuments(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	projectID := "proj" + pipeline.NewID()
	var want []string
	for range 5 {
		doc := newDocument(projectID, newSHA())
		if err := repo.CreateWorkflow(ctx, doc, newWorkflowFor(doc), stages()); err != nil {
			t.Fatal(err)
		}
		want = append(want, doc.ID)
	}
	var got []string
	token := ""
	for range 10 {
		docs, next, err := repo.ListProjectDocuments(ctx, projectID, 2, token)
		if err != nil {
			t.Fatalf("ListProjectDocuments: %v", err)
		}
		if len(docs) > 2 {
			t.Fatalf("page of %d documents, limit 2", len(docs))
		}
		for _, d := range docs {
			got = append(got, d.ID)
		}
		if token = next; token == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("documents = %v, want %v", got, want)
	}
}

func testListProjectWorkflows(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	projectID := "proj" + pipeline.NewID()
	doc := newDocument(projectID, newSHA())
	var want []string
	for range 5 {
		wf := newWorkflowFor(doc) // ULIDs: each newer than the last
		if err := repo.CreateWorkflow(ctx, doc, wf, stages()); err != nil {
			t.Fatal(err)
		}
		want = append([]string{wf.ID}, want...)
	}
	var got []string
	token := ""
	for range 10 {
		wfs, next, err := repo.ListProjectWorkflows(ctx, projectID, 2, token)
		if err != nil {
			t.Fatalf("ListProjectWorkflows: %v", err)
		}
		for _, w := range wfs {
			got = append(got, w.ID)
		}
		if token = next; token == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("workflows = %v, want newest first %v", got, want)
	}
}

// testListRecent: projects are listed with their document counts, and
// recent analyses of every status come newest first across projects,
// paged, filtered by project and status.
func testListRecent(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	projects := []string{"proj" + pipeline.NewID(), "proj" + pipeline.NewID()}
	for _, p := range projects {
		if err := repo.CreateProject(ctx, pipeline.Project{ID: p}); err != nil {
			t.Fatal(err)
		}
	}
	var mine []string // newest first
	var failed string
	for i := range 6 {
		doc := newDocument(projects[i%2], newSHA())
		wf := newWorkflowFor(doc)
		if err := repo.CreateWorkflow(ctx, doc, wf, stages()); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if _, err := repo.SetWorkflowStatus(ctx, refOf(wf), []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowFailed, "broken"); err != nil {
				t.Fatal(err)
			}
			failed = wf.ID
		}
		mine = append([]string{wf.ID}, mine...)
	}
	listed, err := repo.ListProjects(ctx)
	if err != nil {
		t.Fatalf("ListProjects: %v", err)
	}
	ids := make([]string, len(listed))
	for i, p := range listed {
		ids[i] = p.ID
	}
	for _, p := range projects {
		if !slices.Contains(ids, p) {
			t.Fatalf("ListProjects = %v, missing %s", ids, p)
		}
	}
	if n, err := repo.CountProjectDocuments(ctx, projects[0], 0); err != nil || n != 3 {
		t.Fatalf("CountProjectDocuments = %d, %v; want 3", n, err)
	}

	all := func(f pipeline.RecentFilter) []pipeline.StepProgress {
		t.Helper()
		var out []pipeline.StepProgress
		cursor := ""
		for range 1000 {
			page, next, err := repo.ListRecent(ctx, f, 2, cursor)
			if err != nil {
				t.Fatalf("ListRecent(%+v): %v", f, err)
			}
			if len(page) > 2 {
				t.Fatalf("ListRecent gave %d analyses, limit 2", len(page))
			}
			out = append(out, page...)
			if cursor = next; cursor == "" {
				return out
			}
		}
		t.Fatal("ListRecent never ended")
		return nil
	}
	var got []string
	everything := all(pipeline.RecentFilter{})
	for i, p := range everything {
		if i > 0 && p.WorkflowID >= everything[i-1].WorkflowID {
			t.Fatalf("ListRecent: %s after %s, want newest first", p.WorkflowID, everything[i-1].WorkflowID)
		}
		if slices.Contains(mine, p.WorkflowID) {
			got = append(got, p.WorkflowID)
		}
	}
	if !slices.Equal(got, mine) {
		t.Fatalf("ListRecent across projects = %v, want %v", got, mine)
	}
	got = nil
	for _, p := range all(pipeline.RecentFilter{Project: projects[0]}) {
		got = append(got, p.WorkflowID)
	}
	if want := []string{mine[1], mine[3], mine[5]}; !slices.Equal(got, want) {
		t.Fatalf("ListRecent of project %s = %v, want %v", projects[0], got, want)
	}
	onlyFailed := all(pipeline.RecentFilter{Project: projects[0], Status: pipeline.WorkflowFailed})
	if len(onlyFailed) != 1 || onlyFailed[0].WorkflowID != failed || onlyFailed[0].Error != "broken" || onlyFailed[0].TotalSegments != 0 {
		t.Fatalf("failed analyses of %s = %+v, want %s only", projects[0], onlyFailed, failed)
	}
}

// testTransitionRace: many workers race one step change; exactly one wins,
// the rest see a no-op, and exactly one audit record exists.
func testTransitionRace(t *testing.T, tb table.Table, cfg tabletest.Config) {
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	var applied, noops atomic.Int64
	cfg.Race(cfg.Racers, func(int) {
		ok, err := repo.TransitionSteps(t.Context(), f.ref, pipeline.StepChange{Step: pipeline.StepSegmentPrep, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress})
		switch {
		case err != nil:
			t.Errorf("TransitionSteps: %v", err)
		case ok:
			applied.Add(1)
		default:
			noops.Add(1)
		}
	})
	if applied.Load() != 1 || noops.Load() != int64(cfg.Racers-1) {
		t.Fatalf("%d racers: %d applied, %d no-ops; want exactly one applied", cfg.Racers, applied.Load(), noops.Load())
	}
	trs, err := repo.ListTransitions(t.Context(), f.wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 1 || trs[0].Step != pipeline.StepSegmentPrep || trs[0].From != pipeline.StepPending || trs[0].To != pipeline.StepInProgress {
		t.Fatalf("transitions = %+v, want one pending → in_progress", trs)
	}
	if st := progress(t, repo, f.wf.ID).Steps[pipeline.StepSegmentPrep]; st.Status != pipeline.StepInProgress || st.StartedAt == "" {
		t.Fatalf("step = %+v", st)
	}
}

func testTransitionSequence(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	var tick atomic.Int64
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return base.Add(time.Duration(tick.Add(1)) * time.Second) }
	repo := pipeline.NewRepository(tb, pipeline.WithClock(clock))
	f := setup(t, repo)
	created := progress(t, repo, f.wf.ID).UpdatedAt
	pending, inProgress := []pipeline.StepStatus{pipeline.StepPending}, []pipeline.StepStatus{pipeline.StepInProgress}
	step := pipeline.StepFormatParser

	ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: pending, To: pipeline.StepInProgress})
	if !ok || err != nil {
		t.Fatalf("start: %v, %v", ok, err)
	}
	// A retry of a committed change is a no-op, not an error.
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: pending, To: pipeline.StepInProgress}); ok || err != nil {
		t.Fatalf("retried start: applied=%v err=%v, want a no-op", ok, err)
	}
	// A change from a state the step has left is stale.
	ok, err = repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: pending, To: pipeline.StepCompleted})
	wantStale(t, "complete from pending", ok, err)

	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: inProgress, To: pipeline.StepFailed, Error: "parser crashed"}); !ok || err != nil {
		t.Fatalf("fail: %v, %v", ok, err)
	}
	st := progress(t, repo, f.wf.ID).Steps[step]
	if st.Status != pipeline.StepFailed || st.Error != "parser crashed" || st.StartedAt == "" || st.EndedAt == "" || st.EndedAt <= st.StartedAt {
		t.Fatalf("failed step = %+v", st)
	}
	// Several from states: the audit record names the actual one.
	retry := []pipeline.StepStatus{pipeline.StepFailed, pipeline.StepPending}
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: retry, To: pipeline.StepInProgress}); !ok || err != nil {
		t.Fatalf("restart: %v, %v", ok, err)
	}
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: retry, To: pipeline.StepInProgress}); ok || err != nil {
		t.Fatalf("retried restart: applied=%v err=%v, want a no-op", ok, err)
	}
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: inProgress, To: pipeline.StepCompleted}); !ok || err != nil {
		t.Fatalf("complete: %v, %v", ok, err)
	}
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: pipeline.StepOCR, From: []pipeline.StepStatus{pipeline.StepPending, pipeline.StepInProgress}, To: pipeline.StepSkipped, Error: "no OCR engine"}); !ok || err != nil {
		t.Fatalf("skip: %v, %v", ok, err)
	}

	p := progress(t, repo, f.wf.ID)
	if st := p.Steps[step]; st.Status != pipeline.StepCompleted || st.Error != "" || st.Label == "" {
		t.Fatalf("completed step = %+v (a success clears the error, keeps the label)", st)
	}
	if st := p.Steps[pipeline.StepOCR]; st.Status != pipeline.StepSkipped || st.Error != "no OCR engine" || st.EndedAt == "" || st.StartedAt != "" {
		t.Fatalf("skipped step = %+v", st)
	}
	for _, other := range []string{pipeline.StepSegmentPrep, pipeline.StepGraphBuilder} {
		if st := p.Steps[other]; st.Status != pipeline.StepPending || st.Label == "" {
			t.Fatalf("untouched step %s = %+v", other, st)
		}
	}
	if p.UpdatedAt <= created {
		t.Fatalf("updated_at %s was not bumped from %s", p.UpdatedAt, created)
	}

	trs, err := repo.ListTransitions(ctx, f.wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	type tr struct {
		step     string
		from, to pipeline.StepStatus
		err      string
	}
	var got []tr
	for _, x := range trs {
		if x.WorkflowID != f.wf.ID || x.ID == "" || x.At == "" {
			t.Fatalf("transition %+v lacks its ids", x)
		}
		got = append(got, tr{x.Step, x.From, x.To, x.Error})
	}
	want := []tr{
		{step, pipeline.StepPending, pipeline.StepInProgress, ""},
		{step, pipeline.StepInProgress, pipeline.StepFailed, "parser crashed"},
		{step, pipeline.StepFailed, pipeline.StepInProgress, ""},
		{step, pipeline.StepInProgress, pipeline.StepCompleted, ""},
		{pipeline.StepOCR, pipeline.StepPending, pipeline.StepSkipped, "no OCR engine"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("transitions =\n%v\nwant\n%v", got, want)
	}
}

// testTransitionFromSeen: a change from the state the caller saw is one
// transaction and no read; from a state the step has left since, it still
// applies from the actual state (and the audit record names that one), or
// is stale when that state is not one it may leave.
func testTransitionFromSeen(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	var m metered.Meter
	repo := pipeline.NewRepository(m.Table(tb))
	f := setup(t, repo)
	step := pipeline.StepFormatParser
	retry := []pipeline.StepStatus{pipeline.StepPending, pipeline.StepFailed}
	requests := func() metered.Counts { return m.Counts() }

	before := requests()
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, Seen: pipeline.StepPending, From: retry, To: pipeline.StepInProgress}); !ok || err != nil {
		t.Fatalf("start from the seen state: %v, %v", ok, err)
	}
	if got := requests(); got.TableReads != before.TableReads || got.TableWrites != before.TableWrites+1 {
		t.Fatalf("start from the seen state took %d reads and %d writes, want 0 and 1", got.TableReads-before.TableReads, got.TableWrites-before.TableWrites)
	}
	before = requests()
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, Seen: pipeline.StepInProgress, From: retry, To: pipeline.StepInProgress}); ok || err != nil || requests() != before {
		t.Fatalf("seen already in the target state: applied=%v err=%v, want a no-op without requests", ok, err)
	}
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepFailed, Error: "crashed"}); !ok || err != nil {
		t.Fatalf("fail: %v, %v", ok, err)
	}
	// Seen pending, but the step failed since: restarted from failed.
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, Seen: pipeline.StepPending, From: retry, To: pipeline.StepInProgress}); !ok || err != nil {
		t.Fatalf("restart from a stale seen state: %v, %v", ok, err)
	}
	// Seen pending, but the step is in progress: completing from pending
	// or failed is stale.
	ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, Seen: pipeline.StepPending, From: retry, To: pipeline.StepCompleted})
	wantStale(t, "complete from a stale seen state", ok, err)
	if st := progress(t, repo, f.wf.ID).Steps[step]; st.Status != pipeline.StepInProgress || st.Error != "" {
		t.Fatalf("step after the changes = %+v", st)
	}
	trs, err := repo.ListTransitions(ctx, f.wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]pipeline.StepStatus
	for _, x := range trs {
		got = append(got, [2]pipeline.StepStatus{x.From, x.To})
	}
	want := [][2]pipeline.StepStatus{
		{pipeline.StepPending, pipeline.StepInProgress},
		{pipeline.StepInProgress, pipeline.StepFailed},
		{pipeline.StepFailed, pipeline.StepInProgress},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("transitions = %v, want %v", got, want)
	}
}

// testTransitionParallelSteps: changes to different steps at once never
// overwrite each other (each updates only its own step's attributes).
func testTransitionParallelSteps(t *testing.T, tb table.Table, cfg tabletest.Config) {
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	all := stages()
	cfg.Race(len(all), func(w int) {
		s := all[w]
		for _, to := range []pipeline.StepStatus{pipeline.StepInProgress, pipeline.StepCompleted} {
			from := pipeline.StepPending
			if to == pipeline.StepCompleted {
				from = pipeline.StepInProgress
			}
			if ok, err := repo.TransitionSteps(t.Context(), f.ref, pipeline.StepChange{Step: s.Name, From: []pipeline.StepStatus{from}, To: to}); !ok || err != nil {
				t.Errorf("%s → %s: %v, %v", s.Name, to, ok, err)
			}
		}
	})
	p := progress(t, repo, f.wf.ID)
	for _, s := range stages() {
		if st := p.Steps[s.Name]; st.Status != pipeline.StepCompleted || st.Label != s.Label || st.StartedAt == "" || st.EndedAt == "" {
			t.Errorf("step %s = %+v, want completed", s.Name, st)
		}
	}
	if trs, err := repo.ListTransitions(t.Context(), f.wf.ID); err != nil || len(trs) != 2*len(stages()) {
		t.Fatalf("%d transitions, %v; want %d", len(trs), err, 2*len(stages()))
	}
}

func testTransitionMissing(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	pending := []pipeline.StepStatus{pipeline.StepPending}
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: "no_such_step", From: pending, To: pipeline.StepInProgress}); ok || !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("unknown step: applied=%v err=%v, want ErrNotFound", ok, err)
	}
	ghost := pipeline.WorkflowRef{ProjectID: f.ref.ProjectID, DocumentID: f.ref.DocumentID, WorkflowID: pipeline.NewID()}
	if ok, err := repo.TransitionSteps(ctx, ghost, pipeline.StepChange{Step: pipeline.StepOCR, From: pending, To: pipeline.StepInProgress}); ok || !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("missing workflow: applied=%v err=%v, want ErrNotFound", ok, err)
	}
	tabletest.WantMissing(t, tb, pipeline.StepKey(ghost.WorkflowID)) // no upsert of a stub
	if ok, err := repo.SetWorkflowStatus(ctx, ghost, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, ""); ok || !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("status of a missing workflow: applied=%v err=%v, want ErrNotFound", ok, err)
	}
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: "bad.name", From: pending, To: pipeline.StepInProgress}); ok || err == nil {
		t.Fatalf("dotted step name accepted")
	}
	if trs, err := repo.ListTransitions(ctx, f.wf.ID); err != nil || len(trs) != 0 {
		t.Fatalf("failed transitions left audit records %v, %v", trs, err)
	}
}

func testTransitionTTL(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb, pipeline.WithTransitionTTL(time.Hour))
	f := setup(t, repo)
	if ok, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: pipeline.StepOCR, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress}); !ok || err != nil {
		t.Fatalf("transition: %v, %v", ok, err)
	}
	items := tabletest.QueryAll(t, tb, table.Query{PK: pipeline.StepKey(f.wf.ID).PK, SKPrefix: pipeline.PrefixTransition})
	if len(items) != 1 {
		t.Fatalf("%d transition items, want 1", len(items))
	}
	ttl, ok := items[0][table.AttrTTL].(float64)
	if now := float64(time.Now().Unix()); !ok || ttl < now+3500 || ttl > now+3700 {
		t.Fatalf("transition ttl = %v, want about an hour from now", items[0][table.AttrTTL])
	}
	if _, has := tabletest.MustGet(t, tb, pipeline.StepKey(f.wf.ID))[table.AttrTTL]; has {
		t.Fatal("the step item got a ttl")
	}
}

func testWorkflowStatus(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	var tick atomic.Int64
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	repo := pipeline.NewRepository(tb, pipeline.WithClock(func() time.Time {
		return base.Add(time.Duration(tick.Add(1)) * time.Second)
	}))
	a, b := setup(t, repo), setup(t, repo)
	pending, inProgress := []pipeline.WorkflowStatus{pipeline.WorkflowPending}, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}
	for _, f := range []fixture{a, b} {
		if ok, err := repo.SetWorkflowStatus(ctx, f.ref, pending, pipeline.WorkflowInProgress, ""); !ok || err != nil {
			t.Fatalf("start: %v, %v", ok, err)
		}
	}
	if ok, err := repo.SetWorkflowStatus(ctx, a.ref, pending, pipeline.WorkflowInProgress, ""); ok || err != nil {
		t.Fatalf("retried start: applied=%v err=%v, want a no-op", ok, err)
	}
	running := byStatusIDs(t, repo, pipeline.WorkflowInProgress)
	if !slices.Contains(running, a.wf.ID) || !slices.Contains(running, b.wf.ID) {
		t.Fatalf("in-progress index lacks the started workflows")
	}
	if slices.Contains(byStatusIDs(t, repo, pipeline.WorkflowPending), a.wf.ID) {
		t.Fatalf("a started workflow is still in the pending index")
	}
	// Completed: leaves the index altogether (sparse).
	if ok, err := repo.SetWorkflowStatus(ctx, a.ref, inProgress, pipeline.WorkflowCompleted, ""); !ok || err != nil {
		t.Fatalf("complete: %v, %v", ok, err)
	}
	for _, s := range []pipeline.WorkflowStatus{pipeline.WorkflowPending, pipeline.WorkflowInProgress, pipeline.WorkflowFailed, pipeline.WorkflowCompleted} {
		if slices.Contains(byStatusIDs(t, repo, s), a.wf.ID) {
			t.Fatalf("completed workflow listed as %s", s)
		}
	}
	it := tabletest.MustGet(t, tb, pipeline.StepKey(a.wf.ID))
	if _, has := it[table.AttrGSI1PK]; has {
		t.Fatalf("completed step item keeps its index key: %v", it)
	}
	ok, err := repo.SetWorkflowStatus(ctx, a.ref, inProgress, pipeline.WorkflowFailed, "late")
	wantStale(t, "fail a completed workflow", ok, err)

	// Failed: moves to the failed partition with its error.
	if ok, err := repo.SetWorkflowStatus(ctx, b.ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending, pipeline.WorkflowInProgress}, pipeline.WorkflowFailed, "boom"); !ok || err != nil {
		t.Fatalf("fail: %v, %v", ok, err)
	}
	if !slices.Contains(byStatusIDs(t, repo, pipeline.WorkflowFailed), b.wf.ID) || slices.Contains(byStatusIDs(t, repo, pipeline.WorkflowInProgress), b.wf.ID) {
		t.Fatalf("failed workflow not (only) in the failed index")
	}
	for _, f := range []struct {
		fx     fixture
		status pipeline.WorkflowStatus
		err    string
	}{{a, pipeline.WorkflowCompleted, ""}, {b, pipeline.WorkflowFailed, "boom"}} {
		wf, err := repo.GetWorkflow(ctx, f.fx.doc.ID, f.fx.wf.ID)
		if err != nil || wf.Status != f.status || wf.Error != f.err || !wf.UpdatedAt.After(wf.CreatedAt) {
			t.Fatalf("GetWorkflow = %+v, %v; want %s %q", wf, err, f.status, f.err)
		}
		listed, _, err := repo.ListProjectWorkflows(ctx, f.fx.doc.ProjectID, 1, "")
		if err != nil || len(listed) != 1 || listed[0].Status != f.status || listed[0].Error != f.err {
			t.Fatalf("project listing = %+v, %v; want %s", listed, err, f.status)
		}
		if p := progress(t, repo, f.fx.wf.ID); p.Status != f.status || p.Error != f.err {
			t.Fatalf("step item = %s %q, want %s %q", p.Status, p.Error, f.status, f.err)
		}
	}
	// A failed workflow can be retried; the error clears.
	if ok, err := repo.SetWorkflowStatus(ctx, b.ref, []pipeline.WorkflowStatus{pipeline.WorkflowFailed}, pipeline.WorkflowInProgress, ""); !ok || err != nil {
		t.Fatalf("retry: %v, %v", ok, err)
	}
	if p := progress(t, repo, b.wf.ID); p.Status != pipeline.WorkflowInProgress || p.Error != "" {
		t.Fatalf("retried workflow = %s %q", p.Status, p.Error)
	}
}

func testWorkflowStatusRace(t *testing.T, tb table.Table, cfg tabletest.Config) {
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	var applied atomic.Int64
	cfg.Race(cfg.Racers, func(int) {
		ok, err := repo.SetWorkflowStatus(t.Context(), f.ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, "")
		if err != nil {
			t.Errorf("SetWorkflowStatus: %v", err)
		}
		if ok {
			applied.Add(1)
		}
	})
	if applied.Load() != 1 {
		t.Fatalf("%d racers: %d applied, want 1", cfg.Racers, applied.Load())
	}
}

// testListByStatusOrder: the merged index is newest first across shards and
// honours the limit. Its clock is far ahead of real time, so on a shared
// table these workflows are the newest whatever else runs.
func testListByStatusOrder(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	var tick atomic.Int64
	base := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	repo := pipeline.NewRepository(tb, pipeline.WithClock(func() time.Time {
		return base.Add(time.Duration(tick.Add(1)) * time.Minute)
	}))
	const n = 12
	var started []string // oldest first
	shards := map[int]bool{}
	for range n {
		f := setup(t, repo)
		if ok, err := repo.SetWorkflowStatus(ctx, f.ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, ""); !ok || err != nil {
			t.Fatalf("start: %v, %v", ok, err)
		}
		started = append(started, f.wf.ID)
		shards[pipeline.StatusShard(f.wf.ID)] = true
		t.Cleanup(func() { // keep the shared index clean for later runs
			repo.SetWorkflowStatus(context.Background(), f.ref, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowCompleted, "")
		})
	}
	want := slices.Clone(started)
	slices.Reverse(want) // newest first
	for _, limit := range []int{1, 5, n} {
		list, err := repo.ListByStatus(ctx, pipeline.WorkflowInProgress, limit)
		if err != nil {
			t.Fatalf("ListByStatus: %v", err)
		}
		var got []string
		for _, p := range list {
			got = append(got, p.WorkflowID)
		}
		if !slices.Equal(got, want[:limit]) {
			t.Fatalf("ListByStatus(limit %d) = %v, want %v (from %d shards)", limit, got, want[:limit], len(shards))
		}
	}
	// Updating a workflow's status moves it to the front.
	oldest := started[0]
	p := progress(t, repo, oldest)
	ref := pipeline.WorkflowRef{ProjectID: p.ProjectID, DocumentID: p.DocumentID, WorkflowID: oldest}
	if ok, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowFailed, "x"); !ok || err != nil {
		t.Fatal(err)
	}
	if ok, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowFailed}, pipeline.WorkflowInProgress, ""); !ok || err != nil {
		t.Fatal(err)
	}
	list, err := repo.ListByStatus(ctx, pipeline.WorkflowInProgress, 2)
	if err != nil || len(list) != 2 || list[0].WorkflowID != oldest || list[1].WorkflowID != want[0] {
		t.Fatalf("after an update ListByStatus = %+v, %v; want %s first", list, err, oldest)
	}
}

func testUpdateWorkflowInfo(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	mime, exec, total := "application/pdf", "exec-"+f.wf.ID, 7
	err := repo.UpdateWorkflowInfo(ctx, f.ref, pipeline.WorkflowInfo{
		MIMEType: &mime, ExecutionID: &exec, TotalSegments: &total,
		Preprocessing: map[string]string{pipeline.StepSegmentPrep: "completed"},
	})
	if err != nil {
		t.Fatalf("UpdateWorkflowInfo: %v", err)
	}
	if err := repo.UpdateWorkflowInfo(ctx, f.ref, pipeline.WorkflowInfo{Preprocessing: map[string]string{pipeline.StepOCR: "skipped"}}); err != nil {
		t.Fatalf("UpdateWorkflowInfo: %v", err)
	}
	wantPre := map[string]string{pipeline.StepSegmentPrep: "completed", pipeline.StepOCR: "skipped"}
	for _, wf := range workflowItems(t, repo, f) {
		if wf.MIMEType != mime || wf.ExecutionID != exec || wf.TotalSegments != total || !mapsEqual(wf.Preprocessing, wantPre) ||
			wf.FileName != f.wf.FileName || wf.Status != pipeline.WorkflowPending {
			t.Fatalf("workflow = %+v", wf)
		}
	}
	if p := progress(t, repo, f.wf.ID); p.TotalSegments != total || len(p.Steps) != len(stages()) {
		t.Fatalf("step item total = %d", p.TotalSegments)
	}
	ghost := f.ref
	ghost.WorkflowID = pipeline.NewID()
	if err := repo.UpdateWorkflowInfo(ctx, ghost, pipeline.WorkflowInfo{MIMEType: &mime}); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("update of a missing workflow: err = %v, want ErrNotFound", err)
	}
	tabletest.WantMissing(t, tb, pipeline.WorkflowKey(ghost.DocumentID, ghost.WorkflowID))
}

// A step's completion and what it learned commit together, or neither
// does: a stale completion leaves the workflow's info as it was. With the
// next step's start in the same write, all three commit together.
func testStepChangeWithInfo(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	step := pipeline.StepFormatParser
	pending, inProgress := []pipeline.StepStatus{pipeline.StepPending}, []pipeline.StepStatus{pipeline.StepInProgress}
	complete := func(info pipeline.WorkflowInfo) pipeline.StepChange {
		return pipeline.StepChange{Step: step, Seen: pipeline.StepInProgress, From: inProgress, To: pipeline.StepCompleted, Info: &info}
	}
	stale := 3
	_, err := repo.TransitionSteps(ctx, f.ref, complete(pipeline.WorkflowInfo{TotalSegments: &stale}))
	wantStale(t, "complete a pending step", false, err)
	if p := progress(t, repo, f.wf.ID); p.TotalSegments != 0 {
		t.Fatalf("a stale completion recorded its total: %d", p.TotalSegments)
	}
	if _, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: step, From: pending, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	mime, total := "text/plain", 12
	_, err = repo.TransitionSteps(ctx, f.ref,
		complete(pipeline.WorkflowInfo{MIMEType: &mime, TotalSegments: &total}),
		pipeline.StepChange{Step: pipeline.StepOCR, Seen: pipeline.StepPending, From: pending, To: pipeline.StepInProgress},
	)
	if err != nil {
		t.Fatalf("complete with info and start the next step: %v", err)
	}
	p := progress(t, repo, f.wf.ID)
	if p.Steps[step].Status != pipeline.StepCompleted || p.TotalSegments != total {
		t.Fatalf("step item: %s, total %d", p.Steps[step].Status, p.TotalSegments)
	}
	for _, wf := range workflowItems(t, repo, f) {
		if wf.MIMEType != mime || wf.TotalSegments != total {
			t.Fatalf("workflow = %+v", wf)
		}
	}
	if p.Steps[pipeline.StepOCR].Status != pipeline.StepInProgress {
		t.Fatalf("ocr is %s", p.Steps[pipeline.StepOCR].Status)
	}
	trs, err := repo.ListTransitions(ctx, f.wf.ID)
	if err != nil || len(trs) != 3 || trs[1].From != pipeline.StepInProgress || trs[1].To != pipeline.StepCompleted || trs[2].Step != pipeline.StepOCR {
		t.Fatalf("audit = %+v, %v", trs, err)
	}
}

// Several steps move in one write, each with its audit record; a change
// already made is dropped, and a step that moved on since it was read
// sends the changes one by one, so each still ends where it should.
func testTransitionSteps(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	pending := []pipeline.StepStatus{pipeline.StepPending}
	closeFrom := []pipeline.StepStatus{pipeline.StepPending, pipeline.StepInProgress, pipeline.StepFailed}
	if _, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: pipeline.StepSegmentAnalyzer, From: pending, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	_, err := repo.TransitionSteps(ctx, f.ref,
		pipeline.StepChange{Step: pipeline.StepSegmentAnalyzer, Seen: pipeline.StepInProgress, From: closeFrom, To: pipeline.StepCompleted, Error: "3 segments done"},
		pipeline.StepChange{Step: pipeline.StepGraphBuilder, Seen: pipeline.StepPending, From: pending, To: pipeline.StepInProgress},
		pipeline.StepChange{Step: pipeline.StepSegmentPrep, Seen: pipeline.StepCompleted, From: pending, To: pipeline.StepCompleted}, // already there
	)
	if err != nil {
		t.Fatalf("TransitionSteps: %v", err)
	}
	p := progress(t, repo, f.wf.ID)
	if a, g := p.Steps[pipeline.StepSegmentAnalyzer], p.Steps[pipeline.StepGraphBuilder]; a.Status != pipeline.StepCompleted || a.Error != "3 segments done" || g.Status != pipeline.StepInProgress || g.StartedAt == "" {
		t.Fatalf("after the joint write: analyzer %+v, graph %+v", a, g)
	}
	if p.Steps[pipeline.StepSegmentPrep].Status != pipeline.StepPending {
		t.Fatalf("a dropped change was applied: %+v", p.Steps[pipeline.StepSegmentPrep])
	}
	trs, err := repo.ListTransitions(ctx, f.wf.ID)
	if err != nil || len(trs) != 3 {
		t.Fatalf("audit = %+v, %v; want 3 records", trs, err)
	}
	// The summarizer was read as pending but has started since: the joint
	// write fails, and one by one the summarizer's start is a no-op while
	// the document step still completes.
	if _, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: pipeline.StepDocumentSummarizer, From: pending, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	_, err = repo.TransitionSteps(ctx, f.ref,
		pipeline.StepChange{Step: pipeline.StepGraphBuilder, Seen: pipeline.StepInProgress, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepCompleted},
		pipeline.StepChange{Step: pipeline.StepDocumentSummarizer, Seen: pipeline.StepPending, From: pending, To: pipeline.StepInProgress},
	)
	if err != nil {
		t.Fatalf("TransitionSteps after a race: %v", err)
	}
	p = progress(t, repo, f.wf.ID)
	if p.Steps[pipeline.StepGraphBuilder].Status != pipeline.StepCompleted || p.Steps[pipeline.StepDocumentSummarizer].Status != pipeline.StepInProgress {
		t.Fatalf("after the race: %+v", p.Steps)
	}
	if trs, err := repo.ListTransitions(ctx, f.wf.ID); err != nil || len(trs) != 5 {
		t.Fatalf("audit = %d records, %v; want 5 (no record for the no-op)", len(trs), err)
	}
}

// The last step's completion rides on the workflow's outcome: one write,
// each change audited. A guarded change whose step or workflow moved on
// writes nothing and says the state is stale.
func testStatusWithSteps(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	pending := []pipeline.StepStatus{pipeline.StepPending}
	running := []pipeline.WorkflowStatus{pipeline.WorkflowInProgress, pipeline.WorkflowPending}
	if _, err := repo.TransitionSteps(ctx, f.ref, pipeline.StepChange{Step: pipeline.StepDocumentSummarizer, From: pending, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	seen := progress(t, repo, f.wf.ID)
	done := pipeline.StepChange{Step: pipeline.StepDocumentSummarizer, Seen: pipeline.StepInProgress, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepCompleted}
	stale := pipeline.StepChange{Step: pipeline.StepGraphBuilder, Seen: pipeline.StepInProgress, From: []pipeline.StepStatus{pipeline.StepInProgress}, To: pipeline.StepCompleted}
	if _, err := repo.SetWorkflowStatus(ctx, f.ref, running, pipeline.WorkflowCompleted, "", pipeline.StatusSeen(seen), pipeline.StatusWithSteps(done, stale)); !errors.Is(err, pipeline.ErrStale) {
		t.Fatalf("with a step seen in a state it is not in: %v, want ErrStale", err)
	}
	if p := progress(t, repo, f.wf.ID); p.Status == pipeline.WorkflowCompleted || p.Steps[pipeline.StepDocumentSummarizer].Status != pipeline.StepInProgress {
		t.Fatalf("a failed joint write wrote: %s, summarizer %s", p.Status, p.Steps[pipeline.StepDocumentSummarizer].Status)
	}
	if ok, err := repo.SetWorkflowStatus(ctx, f.ref, running, pipeline.WorkflowCompleted, "", pipeline.StatusSeen(seen), pipeline.StatusWithSteps(done)); !ok || err != nil {
		t.Fatalf("joint write: %v, %v", ok, err)
	}
	p := progress(t, repo, f.wf.ID)
	if p.Status != pipeline.WorkflowCompleted || p.Steps[pipeline.StepDocumentSummarizer].Status != pipeline.StepCompleted {
		t.Fatalf("after the joint write: %s, summarizer %+v", p.Status, p.Steps[pipeline.StepDocumentSummarizer])
	}
	trs, err := repo.ListTransitions(ctx, f.wf.ID)
	if err != nil || len(trs) != 2 || trs[1].Step != pipeline.StepDocumentSummarizer || trs[1].To != pipeline.StepCompleted {
		t.Fatalf("audit = %+v, %v", trs, err)
	}
}

// A status change from a step item read before the workflow moved on
// still ends right: the stale attempt fails its conditions, the next reads
// afresh, the project's slot is taken once and given back once, and the
// outcome event is written once.
func testWorkflowStatusSeen(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	stale := progress(t, repo, f.wf.ID) // pending
	if ok, err := repo.SetWorkflowStatus(ctx, f.ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, "", pipeline.StatusSeen(stale)); !ok || err != nil {
		t.Fatalf("start from a fresh read: %v, %v", ok, err)
	}
	wantRunning(t, repo, f.doc.ProjectID, 1)
	// stale still says pending; the workflow is in progress.
	ok, err := repo.SetWorkflowStatus(ctx, f.ref, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress, pipeline.WorkflowPending}, pipeline.WorkflowCompleted, "", pipeline.StatusSeen(stale))
	if !ok || err != nil {
		t.Fatalf("complete from a stale read: %v, %v", ok, err)
	}
	if p := progress(t, repo, f.wf.ID); p.Status != pipeline.WorkflowCompleted {
		t.Fatalf("status %s, want completed", p.Status)
	}
	wantRunning(t, repo, f.doc.ProjectID, 0)
	events, err := repo.ListWorkflowEvents(ctx, f.wf.ID)
	if err != nil || len(events) != 1 || events[0].Event.Type != pipeline.EventCompleted {
		t.Fatalf("events = %+v, %v; want one analysis.completed", events, err)
	}
}

// workflowItems reads the fixture's workflow from both of its items: under
// its document and in its project's listing.
func workflowItems(t *testing.T, repo *pipeline.Repository, f fixture) []pipeline.Workflow {
	t.Helper()
	meta, err := repo.GetWorkflow(t.Context(), f.doc.ID, f.wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	listed, _, err := repo.ListProjectWorkflows(t.Context(), f.doc.ProjectID, 1, "")
	if err != nil || len(listed) != 1 {
		t.Fatal(listed, err)
	}
	return []pipeline.Workflow{meta, listed[0]}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func makeSegments(wfID string, from, to int) []pipeline.Segment {
	var segs []pipeline.Segment
	for i := from; i <= to; i++ {
		segs = append(segs, pipeline.Segment{
			WorkflowID: wfID, Index: i, Kind: "page", Status: pipeline.SegmentPending,
			TextKey: fmt.Sprintf("p/d/%s/segments/%06d/text.txt", wfID, i), Chars: i * 10,
		})
	}
	return segs
}

func testSegmentsPaging(t *testing.T, tb table.Table, cfg tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	n := cfg.Segments
	for from := 1; from <= n; from += 500 {
		if err := repo.PutSegments(ctx, makeSegments(f.wf.ID, from, min(from+499, n))); err != nil {
			t.Fatalf("PutSegments: %v", err)
		}
	}
	// Idempotent: writing a batch again changes nothing but its items.
	if err := repo.PutSegments(ctx, makeSegments(f.wf.ID, 1, 150)); err != nil {
		t.Fatalf("PutSegments again: %v", err)
	}
	next, token, pages := 1, "", 0
	for {
		segs, tok, err := repo.ListSegments(ctx, f.wf.ID, 1000, token)
		if err != nil {
			t.Fatalf("ListSegments: %v", err)
		}
		pages++
		for _, s := range segs {
			if s.Index != next || s.WorkflowID != f.wf.ID || s.Chars != next*10 || s.Status != pipeline.SegmentPending {
				t.Fatalf("segment %+v, want index %d", s, next)
			}
			next++
		}
		if token = tok; token == "" || pages > n {
			break
		}
	}
	if next-1 != n {
		t.Fatalf("paged through %d segments, want %d", next-1, n)
	}
	if pages < 2 && n > 1000 {
		t.Fatalf("%d segments came in %d page(s) of at most 1000", n, pages)
	}
	s, err := repo.GetSegment(ctx, f.wf.ID, n/2)
	if err != nil || s.Index != n/2 || s.TextKey == "" {
		t.Fatalf("GetSegment = %+v, %v", s, err)
	}
	if _, err := repo.GetSegment(ctx, f.wf.ID, n+1); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("GetSegment past the end: err = %v", err)
	}
	// The segments do not leak into the workflow's other listings.
	if trs, err := repo.ListTransitions(ctx, f.wf.ID); err != nil || len(trs) != 0 {
		t.Fatalf("ListTransitions = %v, %v", trs, err)
	}
}

// testFinishSegmentRace: racing workers finishing the same segments count
// each exactly once.
func testFinishSegmentRace(t *testing.T, tb table.Table, cfg tabletest.Config) {
	const segs = 10
	ctx, repo, f := setupSegments(t, tb, segs)
	outcome := func(i int) pipeline.SegmentStatus {
		switch i % 5 {
		case 0:
			return pipeline.SegmentFailed
		case 1:
			return pipeline.SegmentSkipped
		}
		return pipeline.SegmentDone
	}
	var applied atomic.Int64
	cfg.Race(max(cfg.Racers, 2*segs), func(w int) {
		i := w%segs + 1
		ok, err := repo.FinishSegment(ctx, f.wf.ID, i, outcome(i), pipeline.SegmentResult{Language: "en", ResultKey: fmt.Sprintf("r/%d", i)})
		if err != nil {
			t.Errorf("FinishSegment %d: %v", i, err)
		}
		if ok {
			applied.Add(1)
		}
	})
	if applied.Load() != segs {
		t.Fatalf("%d finishes applied, want %d (one per segment)", applied.Load(), segs)
	}
	p := progress(t, repo, f.wf.ID)
	if p.SegmentsDone != 6 || p.SegmentsFailed != 2 || p.SegmentsSkipped != 2 {
		t.Fatalf("counters done=%d failed=%d skipped=%d, want 6/2/2", p.SegmentsDone, p.SegmentsFailed, p.SegmentsSkipped)
	}
	s, err := repo.GetSegment(ctx, f.wf.ID, 3)
	if err != nil || s.Status != pipeline.SegmentDone || s.Language != "en" || s.ResultKey != "r/3" || s.TextKey == "" || s.Chars != 30 {
		t.Fatalf("finished segment = %+v, %v", s, err)
	}
}

// testFinishSegmentRerun: outcomes only move up pending < done < skipped
// < failed within a run; only ResetFailedSegments, with its audit items,
// takes a failed segment back.
func testFinishSegmentRerun(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx, repo, f := setupSegments(t, tb, 4)
	finish := func(i int, to pipeline.SegmentStatus, errMsg string) (bool, error) {
		return repo.FinishSegment(ctx, f.wf.ID, i, to, pipeline.SegmentResult{Error: errMsg, Keywords: []string{"k"}, Stage: pipeline.StepSegmentAnalyzer})
	}
	counters := func(done, failed, skipped int) {
		t.Helper()
		p := progress(t, repo, f.wf.ID)
		if p.SegmentsDone != done || p.SegmentsFailed != failed || p.SegmentsSkipped != skipped {
			t.Fatalf("counters %d/%d/%d, want %d/%d/%d", p.SegmentsDone, p.SegmentsFailed, p.SegmentsSkipped, done, failed, skipped)
		}
	}
	status := func(i int) pipeline.Segment {
		t.Helper()
		s, err := repo.GetSegment(ctx, f.wf.ID, i)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i, to := range []pipeline.SegmentStatus{pipeline.SegmentFailed, pipeline.SegmentFailed, pipeline.SegmentDone, pipeline.SegmentSkipped} {
		if ok, err := finish(i+1, to, map[bool]string{true: "bad page"}[to == pipeline.SegmentFailed]); !ok || err != nil {
			t.Fatalf("finish %d: %v, %v", i+1, ok, err)
		}
	}
	counters(1, 2, 1)
	failed, err := repo.FailedSegments(ctx, f.wf.ID)
	if err != nil || len(failed) != 2 || failed[0].Index != 1 || failed[1].Index != 2 || failed[0].Error != "bad page" || failed[0].Stage != pipeline.StepSegmentAnalyzer {
		t.Fatalf("FailedSegments = %+v, %v", failed, err)
	}
	// Nothing turns failed or skipped into done, and a second failure
	// keeps the first reason.
	for _, c := range []struct {
		i  int
		to pipeline.SegmentStatus
	}{{1, pipeline.SegmentDone}, {2, pipeline.SegmentFailed}, {4, pipeline.SegmentDone}, {3, pipeline.SegmentDone}} {
		if ok, err := finish(c.i, c.to, "late"); ok || err != nil {
			t.Fatalf("finish %d as %s: applied=%v err=%v, want a no-op", c.i, c.to, ok, err)
		}
	}
	counters(1, 2, 1)
	if s := status(1); s.Status != pipeline.SegmentFailed || s.Error != "bad page" {
		t.Fatalf("segment 1 after a late done = %+v", s)
	}
	// A failure outranks a sibling's done, and a skip.
	if ok, err := finish(3, pipeline.SegmentFailed, "sibling failed"); !ok || err != nil {
		t.Fatalf("fail a done segment: %v, %v", ok, err)
	}
	if ok, err := finish(4, pipeline.SegmentFailed, "failed too"); !ok || err != nil {
		t.Fatalf("fail a skipped segment: %v, %v", ok, err)
	}
	counters(0, 4, 0)
	if n := progress(t, repo, f.wf.ID).Steps[pipeline.StepSegmentAnalyzer].SegmentsFailed; n != 4 {
		t.Fatalf("the stage failed %d segments by its own count, want 4", n)
	}
	if _, err := finish(99, pipeline.SegmentDone, ""); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("finish of a missing segment: err = %v, want ErrNotFound", err)
	}
	if _, err := finish(4, pipeline.SegmentPending, ""); err == nil {
		t.Fatal("finishing as pending accepted")
	}
	// The re-run is the way back, and the audit trail says so.
	reset, err := repo.ResetFailedSegments(ctx, f.ref)
	if err != nil || len(reset) != 4 {
		t.Fatalf("ResetFailedSegments = %v, %v", reset, err)
	}
	counters(0, 0, 0)
	if n := progress(t, repo, f.wf.ID).Steps[pipeline.StepSegmentAnalyzer].SegmentsFailed; n != 0 {
		t.Fatalf("after the reset the stage still counts %d failures", n)
	}
	if s := status(3); s.Status != pipeline.SegmentPending || s.Error != "" || s.Stage != "" {
		t.Fatalf("reset segment = %+v", s)
	}
	trs, err := repo.ListTransitions(ctx, f.wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	audited := 0
	for _, tr := range trs {
		if tr.Step == pipeline.SegmentStepName(3) && tr.From == "failed" && tr.To == "pending" && strings.Contains(tr.Error, "sibling failed") {
			audited++
		}
	}
	if audited != 1 {
		t.Fatalf("audit trail of the reset: %+v", trs)
	}
	if ok, err := finish(1, pipeline.SegmentDone, ""); !ok || err != nil {
		t.Fatalf("re-run finish: %v, %v", ok, err)
	}
	counters(1, 0, 0)
	if again, err := repo.ResetFailedSegments(ctx, f.ref); err != nil || len(again) != 0 {
		t.Fatalf("second reset = %v, %v", again, err)
	}
}

// testIndexOlderProject: a project item stored before projects were
// listed on the index gets listed by IndexProject, once.
func testIndexOlderProject(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	id := "proj" + pipeline.NewID()
	key := pipeline.ProjectKey(id)
	old := table.Item{table.AttrPK: key.PK, table.AttrSK: key.SK, table.AttrData: map[string]any{"id": id, "name": id, "settings": map[string]any{}}}
	if err := tb.Put(ctx, old, table.NotExists{Path: table.AttrPK}); err != nil {
		t.Fatal(err)
	}
	listed := func() bool {
		t.Helper()
		ps, err := repo.ListProjects(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ps, func(p pipeline.Project) bool { return p.ID == id })
	}
	if listed() {
		t.Fatal("an unindexed project is listed")
	}
	for range 2 {
		if err := repo.IndexProject(ctx, id); err != nil {
			t.Fatal(err)
		}
		if !listed() {
			t.Fatal("IndexProject did not list the project")
		}
	}
	if err := repo.IndexProject(ctx, "proj"+pipeline.NewID()); err != nil {
		t.Fatalf("IndexProject of a missing project: %v", err)
	}
	if _, err := repo.GetProject(ctx, id); err != nil {
		t.Fatal(err)
	}
}

// testSegmentOutcomeRace: workers racing different outcomes for the same
// segments (sibling stages) leave each at the strongest one, counted
// once.
func testSegmentOutcomeRace(t *testing.T, tb table.Table, cfg tabletest.Config) {
	const segs = 6
	ctx, repo, f := setupSegments(t, tb, segs)
	outcomes := []pipeline.SegmentStatus{pipeline.SegmentDone, pipeline.SegmentSkipped, pipeline.SegmentFailed}
	// Segment i sees outcomes up to want(i): racer w tries outcome
	// (w/segs)%3, capped there.
	want := func(i int) pipeline.SegmentStatus { return outcomes[i%3] }
	cfg.Race(max(cfg.Racers, 3*segs), func(w int) {
		i := w%segs + 1
		to := outcomes[min((w/segs)%3, i%3)]
		if _, err := repo.FinishSegments(ctx, f.wf.ID, []pipeline.SegmentFinish{{Index: i, To: to, Result: pipeline.SegmentResult{Error: string(to)}}}); err != nil {
			t.Errorf("FinishSegments %d as %s: %v", i, to, err)
		}
	})
	counts := map[pipeline.SegmentStatus]int{}
	for i := 1; i <= segs; i++ {
		s, err := repo.GetSegment(ctx, f.wf.ID, i)
		if err != nil || s.Status != want(i) {
			t.Fatalf("segment %d = %+v, %v; want %s", i, s, err, want(i))
		}
		counts[s.Status]++
	}
	p := progress(t, repo, f.wf.ID)
	if p.SegmentsDone != counts[pipeline.SegmentDone] || p.SegmentsSkipped != counts[pipeline.SegmentSkipped] || p.SegmentsFailed != counts[pipeline.SegmentFailed] {
		t.Fatalf("counters %d/%d/%d, want %v", p.SegmentsDone, p.SegmentsFailed, p.SegmentsSkipped, counts)
	}
}

// testFinishSegmentsBatch: a batch of outcomes is recorded with exact
// counters, and recording it again changes nothing.
func testFinishSegmentsBatch(t *testing.T, tb table.Table, cfg tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	const segs = 150 // more than one transaction's worth
	if err := repo.PutSegments(ctx, makeSegments(f.wf.ID, 1, segs)); err != nil {
		t.Fatal(err)
	}
	fins := make([]pipeline.SegmentFinish, segs)
	for i := range fins {
		to := pipeline.SegmentDone
		if i%10 == 0 {
			to = pipeline.SegmentFailed
		}
		fins[i] = pipeline.SegmentFinish{Index: i + 1, To: to, Result: pipeline.SegmentResult{ResultKey: "batch"}}
	}
	for round := 0; round < 2; round++ {
		n, err := repo.FinishSegments(ctx, f.wf.ID, fins)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{segs, 0}[round]; n != want {
			t.Fatalf("round %d: %d applied, want %d", round, n, want)
		}
		p := progress(t, repo, f.wf.ID)
		if p.SegmentsDone != 135 || p.SegmentsFailed != 15 {
			t.Fatalf("round %d: done=%d failed=%d, want 135/15", round, p.SegmentsDone, p.SegmentsFailed)
		}
	}
	got, err := repo.SegmentsInRange(ctx, f.wf.ID, 9, 12)
	if err != nil || len(got) != 4 || got[0].Index != 9 || got[3].Index != 12 {
		t.Fatalf("SegmentsInRange = %+v, %v", got, err)
	}
}

// testFinishSegmentsFromStale: finishes that say the status they read
// their segments in are recorded without a read; one whose segment has
// moved since (a sibling failed it) is settled as if read afresh.
func testFinishSegmentsFromStale(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx, repo, f := setupSegments(t, tb, 3)
	if _, err := repo.FinishSegment(ctx, f.wf.ID, 2, pipeline.SegmentFailed, pipeline.SegmentResult{Error: "sibling"}); err != nil {
		t.Fatal(err)
	}
	var fins []pipeline.SegmentFinish
	for i := 1; i <= 3; i++ {
		fins = append(fins, pipeline.SegmentFinish{Index: i, From: pipeline.SegmentPending, To: pipeline.SegmentDone, Result: pipeline.SegmentResult{Language: "en"}})
	}
	n, err := repo.FinishSegments(ctx, f.wf.ID, fins)
	if err != nil || n != 2 {
		t.Fatalf("FinishSegments = %d, %v; want 2 applied", n, err)
	}
	for i, want := range map[int]pipeline.SegmentStatus{1: pipeline.SegmentDone, 2: pipeline.SegmentFailed, 3: pipeline.SegmentDone} {
		if s, err := repo.GetSegment(ctx, f.wf.ID, i); err != nil || s.Status != want {
			t.Errorf("segment %d = %+v, %v; want %s", i, s, err, want)
		}
	}
	if p := progress(t, repo, f.wf.ID); p.SegmentsDone != 2 || p.SegmentsFailed != 1 {
		t.Errorf("counters done=%d failed=%d, want 2/1", p.SegmentsDone, p.SegmentsFailed)
	}
}

// testPutSegmentsKeepsFinished: rebuilding segments (a late duplicate of
// the builder) never resets one that already finished.
func testPutSegmentsKeepsFinished(t *testing.T, tb table.Table, cfg tabletest.Config) {
	ctx, repo, f := setupSegments(t, tb, 5)
	if _, err := repo.FinishSegment(ctx, f.wf.ID, 3, pipeline.SegmentDone, pipeline.SegmentResult{Language: "en"}); err != nil {
		t.Fatal(err)
	}
	if err := repo.PutSegments(ctx, makeSegments(f.wf.ID, 1, 6)); err != nil {
		t.Fatal(err)
	}
	s3, err := repo.GetSegment(ctx, f.wf.ID, 3)
	if err != nil || s3.Status != pipeline.SegmentDone || s3.Language != "en" {
		t.Fatalf("segment 3 after a rebuild = %+v, %v", s3, err)
	}
	if s6, err := repo.GetSegment(ctx, f.wf.ID, 6); err != nil || s6.Status != pipeline.SegmentPending {
		t.Fatalf("segment 6 = %+v, %v", s6, err)
	}
}

// testDocumentWorkflows: a document's workflows, newest first.
func testDocumentWorkflows(t *testing.T, tb table.Table, cfg tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	f := setup(t, repo)
	wfs, err := repo.ListDocumentWorkflows(ctx, f.doc.ID)
	if err != nil || len(wfs) != 1 || wfs[0].ID != f.wf.ID {
		t.Fatalf("ListDocumentWorkflows = %+v, %v", wfs, err)
	}
}
