package pipeline_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/table"
)

// The repository's behaviour is pinned by the conformance suite
// (pipeline/table/tabletest), run by every driver. These tests cover input
// validation, which does not depend on the driver.

func newRepo(t *testing.T) (*pipeline.Repository, table.Table) {
	t.Helper()
	tb, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return pipeline.NewRepository(tb), tb
}

func TestCreateWorkflowValidates(t *testing.T) {
	t.Parallel()
	repo, tb := newRepo(t)
	doc := pipeline.Document{ProjectID: "p", ID: "d", SHA256: "abc"}
	wf := pipeline.Workflow{ID: "w", ProjectID: "p", DocumentID: "d"}
	stages := pipelinefile.Default().Stages
	for name, c := range map[string]struct {
		doc    pipeline.Document
		wf     pipeline.Workflow
		stages []pipeline.Stage
	}{
		"empty workflow id": {doc, pipeline.Workflow{ProjectID: "p", DocumentID: "d"}, stages},
		"hash in an id":     {pipeline.Document{ProjectID: "p#x", ID: "d", SHA256: "abc"}, pipeline.Workflow{ID: "w", ProjectID: "p#x", DocumentID: "d"}, stages},
		"other document":    {doc, pipeline.Workflow{ID: "w", ProjectID: "p", DocumentID: "e"}, stages},
		"other project":     {doc, pipeline.Workflow{ID: "w", ProjectID: "q", DocumentID: "d"}, stages},
		"no content hash":   {pipeline.Document{ProjectID: "p", ID: "d"}, wf, stages},
		"no stages":         {doc, wf, nil},
		"dotted stage name": {doc, wf, []pipeline.Stage{{Name: "a.b"}}},
		"nameless stage":    {doc, wf, []pipeline.Stage{{Label: "x"}}},
	} {
		if err := repo.CreateWorkflow(t.Context(), c.doc, c.wf, c.stages); err == nil || errors.Is(err, table.ErrConditionFailed) {
			t.Errorf("%s: err = %v, want a validation error", name, err)
		}
	}
	page, err := tb.Query(t.Context(), table.Query{PK: pipeline.ProjectKey("p").PK})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("rejected creates wrote %v, %v", page.Items, err)
	}
}

func TestStatusChangesValidate(t *testing.T) {
	t.Parallel()
	repo, _ := newRepo(t)
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}
	if _, err := repo.TransitionSteps(t.Context(), ref, pipeline.StepChange{Step: pipeline.StepOCR, From: nil, To: pipeline.StepInProgress}); err == nil {
		t.Error("transition with no from state accepted")
	}
	if _, err := repo.SetWorkflowStatus(t.Context(), ref, nil, pipeline.WorkflowFailed, ""); err == nil {
		t.Error("status change with no from state accepted")
	}
	if _, err := repo.FinishSegment(t.Context(), "w", 1, pipeline.SegmentPending, pipeline.SegmentResult{}); err == nil {
		t.Error("finishing a segment as pending accepted")
	}
	for _, bad := range [][]pipeline.Segment{
		{{WorkflowID: "", Index: 1}},
		{{WorkflowID: "w", Index: -1}},
		{{WorkflowID: "w", Index: 1_000_000}},
	} {
		if err := repo.PutSegments(t.Context(), bad); err == nil {
			t.Errorf("PutSegments(%+v) accepted", bad)
		}
	}
	bad := -1
	if err := repo.UpdateWorkflowInfo(t.Context(), ref, pipeline.WorkflowInfo{TotalSegments: &bad}); err == nil {
		t.Error("negative total accepted")
	}
	if err := repo.UpdateWorkflowInfo(t.Context(), ref, pipeline.WorkflowInfo{Preprocessing: map[string]string{"a.b": "x"}}); err == nil {
		t.Error("dotted stage name accepted")
	}
}
