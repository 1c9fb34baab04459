package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// backfillStarter is a fakeStarter that also takes backfills.
type backfillStarter struct {
	*fakeStarter
	mu    sync.Mutex
	calls []string
}

func (s *backfillStarter) Backfill(_ context.Context, project, name string, version int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, project+" "+pipeline.PipelineKey(name, version))
	return 3, nil
}

// A version's page counts the project's documents on it and on older
// versions, by each document's latest workflow; the preview API forecasts
// a backfill per document, and the button's API starts it where the
// server can.
func TestBackfillSection(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ids := pipelineFixture(t, b)
	ctx := context.Background()
	for _, id := range ids[:3] { // the v1 workflows end
		p, err := b.repo.GetProgress(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ref := pipeline.WorkflowRef{ProjectID: p.ProjectID, DocumentID: p.DocumentID, WorkflowID: id}
		if _, err := b.repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowCompleted, ""); err != nil {
			t.Fatal(err)
		}
	}

	page := b.get(t, "/pipelines/docpipe?version=2")
	expectCode(t, page, http.StatusOK)
	for _, want := range []string{`<span data-count="on-version">2</span> on docpipe@2`, `<span data-count="on-older">3</span> on older versions`, `class="backfill-preview"`, "docpipe backfill --project default --pipeline docpipe@2"} {
		if !strings.Contains(string(page.body), want) {
			t.Errorf("version page lacks %q", want)
		}
	}
	if strings.Contains(string(page.body), `class="backfill"`) {
		t.Error("a server that cannot backfill offers the button")
	}

	var v versionDocuments
	r := b.get(t, "/api/pipelines/docpipe/versions/2/backfill")
	expectCode(t, r, http.StatusOK)
	r.json(t, &v)
	if v.Project != "default" || v.OnVersion != 2 || v.Older != 3 || len(v.Forecast) != 3 || v.CanStart {
		t.Fatalf("preview = %+v, want 2 on v2, 3 older, 3 forecast rows, no start", v)
	}
	for _, f := range v.Forecast {
		if f.Version != 1 || len(f.Run) == 0 || f.Run[0] != pipeline.StepSegmentPrep {
			t.Errorf("forecast row %+v, want a v1 document running from segment_prep", f)
		}
	}
	post := func(b *testBundle) response {
		return b.do(t, httptest.NewRequest(http.MethodPost, "/api/pipelines/docpipe/versions/2/backfill?project=default", nil))
	}
	expectCode(t, post(b), http.StatusNotImplemented)

	var bs *backfillStarter
	withButton := setup(t, func(o *Options) {
		bs = &backfillStarter{fakeStarter: o.Starter.(*fakeStarter)}
		o.Starter = bs
	})
	pipelineFixture(t, withButton)
	r = post(withButton)
	expectCode(t, r, http.StatusAccepted)
	if len(bs.calls) != 1 || bs.calls[0] != "default docpipe@2" {
		t.Errorf("backfills started: %q", bs.calls)
	}
}

// An analysis's page links the analysis it supersedes and the one that
// superseded it, and names where a reused step's output came from.
func TestAnalysisShowsSupersedesAndReuse(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ids := pipelineFixture(t, b)
	ctx := context.Background()
	p, err := b.repo.GetProgress(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	old, err := b.repo.GetWorkflow(ctx, p.DocumentID, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	def, err := b.repo.Definition(ctx, "docpipe", 2)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := b.repo.StartBackfillWorkflow(ctx, old, 2, def.Stages, false)
	if err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
	if _, err := b.repo.TransitionSteps(ctx, ref, pipeline.StepChange{Step: pipeline.StepSegmentAnalyzer, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepCompleted, ReusedFrom: old.ID}); err != nil {
		t.Fatal(err)
	}
	page := b.get(t, "/analyses/"+wf.ID)
	expectCode(t, page, http.StatusOK)
	for _, want := range []string{`supersedes <a href="/analyses/` + old.ID + `"`, `reused from <a href="/analyses/` + old.ID + `"`} {
		if !strings.Contains(string(page.body), want) {
			t.Errorf("the new analysis's page lacks %q", want)
		}
	}
	page = b.get(t, "/analyses/"+old.ID)
	if want := `superseded by <a href="/analyses/` + wf.ID + `"`; !strings.Contains(string(page.body), want) {
		t.Errorf("the old analysis's page lacks %q", want)
	}
	// The document's page is its latest analysis's.
	page = b.get(t, "/analyses/"+wf.DocumentID)
	expectCode(t, page, http.StatusSeeOther)
	if got := page.header.Get("Location"); got != "/analyses/"+wf.ID {
		t.Errorf("the document's page leads to %q, want its latest analysis %s", got, wf.ID)
	}
	expectCode(t, b.get(t, "/analyses/nosuchthing"), http.StatusNotFound)
}
