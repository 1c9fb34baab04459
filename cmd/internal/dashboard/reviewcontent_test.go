package dashboard

import (
	"context"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// triagedPipeline classifies a document with a command, then waits for a
// review of the classification.
const triagedPipeline = `name: triaged
stages:
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: document_summarizer
    needs: [segment_analyzer]
    run: {builtin: document_summarizer}
  - name: classify
    label: Classification
    needs: [document_summarizer]
    run: {command: [classify]}
  - name: check
    needs: [classify]
    run: {review: {assign: [alice]}, due: 72h}
`

// reviewWithOutputs opens a review of the triaged pipeline whose workflow
// has a summary and a classification.
func reviewWithOutputs(t *testing.T) (*testBundle, pipeline.Review) {
	t.Helper()
	def, err := pipelinefile.Parse("triaged.yaml", []byte(triagedPipeline))
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, func(o *Options) {
		o.Repo = pipeline.NewRepository(o.Repo.Table(), pipeline.WithBuiltinPipeline(def))
	})
	v := b.openReview(t, "lease.txt", pipeline.ReviewSpec{Assign: []string{"alice"}, DueSeconds: 3600}, time.Now())
	ctx := context.Background()
	put := func(key, body string) {
		if err := blob.PutBytes(ctx, b.blobs, key, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	put(pipeline.SummaryBlobKey(v.Ref()), `{"language":"en","summary":[{"segment":0,"text":"A lease for three years.","score":1},{"segment":2,"text":"Rent is due monthly.","score":0.5}]}`)
	put(pipeline.StageOutputBlobKey(v.Ref(), "classify"), `{"category":"lease","confidence":0.8,"tags":["rent", "term"],"why":"line one\nline two"}`)
	return b, v
}

func TestReviewPageShowsWhatIsReviewed(t *testing.T) {
	t.Parallel()
	b, v := reviewWithOutputs(t)

	var d reviewDetail
	r := b.get(t, "/api/reviews/"+v.ID)
	expectCode(t, r, http.StatusOK)
	r.json(t, &d)
	if d.ID != v.ID || d.Content.Summary == nil || d.Content.Summary.Value != "A lease for three years. Rent is due monthly." {
		t.Fatalf("review detail: %+v", d)
	}
	if len(d.Content.Stages) != 1 || d.Content.Stages[0].Stage != "classify" || d.Content.Stages[0].Label != "Classification" {
		t.Fatalf("stages an approval may edit: %+v", d.Content.Stages)
	}
	var got []string
	for _, f := range d.Content.Stages[0].Fields {
		got = append(got, f.Edit+"="+f.Value)
	}
	// In the stage's own order; strings as text, other values as JSON.
	want := []string{"classify.category=lease", "classify.confidence=0.8", `classify.tags=["rent","term"]`, "classify.why=line one\nline two"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("fields %q, want %q", got, want)
	}
	if f := d.Content.Stages[0].Fields; f[0].Long || !f[3].Long {
		t.Errorf("a short value is edited on a line, a multi-line one in a text area: %+v", f)
	}

	page := b.get(t, "/reviews/"+v.ID)
	expectCode(t, page, http.StatusOK)
	body := string(page.body)
	for _, want := range []string{
		`<label for="edit-summary">Summary</label>`,
		">\nA lease for three years. Rent is due monthly.</textarea>",
		`<label for="edit-classify.category">category <code>classify.category</code></label>`,
		`name="classify.category" data-edit value="lease"`,
		`name="classify.tags" data-edit value="` + html.EscapeString(`["rent","term"]`) + `"`,
		">\nline one\nline two</textarea>",
		`data-error-for="classify.category"`,
		`<legend>Classification (classify)</legend>`,
		`data-action="approve"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("review page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "style=") {
		t.Error("review page has inline script or style, which the CSP forbids")
	}
	queue := string(b.get(t, "/reviews").body)
	if !strings.Contains(queue, `href="/reviews/`+v.ID+`"`) {
		t.Errorf("the queue's row does not open the review:\n%s", queue)
	}

	expectCode(t, b.get(t, "/reviews/"+v.WorkflowID+".nosuch"), http.StatusNotFound)
	expectCode(t, b.get(t, "/api/reviews/not-a-review"), http.StatusNotFound)
}

// A refused edit is named in the answer, so that the page shows the
// server's error beside that field; nothing is decided.
func TestReviewEditRefusedNamesTheEdit(t *testing.T) {
	t.Parallel()
	b, v := reviewWithOutputs(t)
	r := b.act(t, v.ID, "approve", `{"by":"alice","edits":{"classify.category":"deed","segment_analyzer.x":"1"}}`, "")
	expectCode(t, r, http.StatusBadRequest)
	var e struct{ Error, Edit string }
	r.json(t, &e)
	if e.Edit != "segment_analyzer.x" || !strings.Contains(e.Error, "writes no document JSON output") {
		t.Fatalf("refusal %+v does not name the edit and say why", e)
	}
	got, err := b.repo.GetReview(context.Background(), v.WorkflowID, v.Stage)
	if err != nil || got.State != pipeline.ReviewOpen {
		t.Fatalf("a refused approval decided the review: %+v, %v", got, err)
	}
	r = b.act(t, v.ID, "approve", `{"by":"alice","edits":{"classify.category":"deed"}}`, "")
	expectCode(t, r, http.StatusOK)

	// Once decided, the page says so and offers nothing to change.
	page := string(b.get(t, "/reviews/"+v.ID).body)
	if !strings.Contains(page, `<fieldset class="review-content" disabled>`) || !strings.Contains(page, "approved by alice") || strings.Contains(page, "data-action") {
		t.Errorf("a decided review's page still offers a decision:\n%s", page)
	}
}

// An output too large to show, or that is not an object, is named with
// why, not shown field by field.
func TestReviewPageNamesOutputsItCannotShow(t *testing.T) {
	t.Parallel()
	b, v := reviewWithOutputs(t)
	big := `{"text":"` + strings.Repeat("x", maxReviewOutputBytes) + `"}`
	if err := blob.PutBytes(context.Background(), b.blobs, pipeline.StageOutputBlobKey(v.Ref(), "classify"), []byte(big)); err != nil {
		t.Fatal(err)
	}
	var d reviewDetail
	b.get(t, "/api/reviews/"+v.ID).json(t, &d)
	if len(d.Content.Stages) != 1 || len(d.Content.Stages[0].Fields) != 0 || !strings.Contains(d.Content.Stages[0].Note, "--set") {
		t.Fatalf("a too-large output: %+v", d.Content.Stages)
	}
	if err := blob.PutBytes(context.Background(), b.blobs, pipeline.StageOutputBlobKey(v.Ref(), "classify"), []byte(`[1,2]`)); err != nil {
		t.Fatal(err)
	}
	b.get(t, "/api/reviews/"+v.ID).json(t, &d)
	if len(d.Content.Stages) != 1 || !strings.Contains(d.Content.Stages[0].Note, "not a JSON object") {
		t.Fatalf("an output that is not an object: %+v", d.Content.Stages)
	}
}

// The analysis page asks only for the results its pipeline writes: one
// without a graph builder says so instead of loading a graph that never
// comes.
func TestAnalysisPageAsksOnlyForResultsItsPipelineWrites(t *testing.T) {
	t.Parallel()
	b, v := reviewWithOutputs(t) // triaged: a summary, no graph
	page := string(b.get(t, "/analyses/"+v.WorkflowID).body)
	for _, want := range []string{`data-summary="true" data-graph="false"`, "This pipeline draws no graph."} {
		if !strings.Contains(page, want) {
			t.Errorf("analysis page of a pipeline without a graph lacks %q", want)
		}
	}
	d := setup(t, func(o *Options) {
		o.Repo = pipeline.NewRepository(o.Repo.Table(), pipeline.WithBuiltinPipeline(pipelinefile.Default()))
	})
	reg := d.register(t, "a.txt", pipeline.WorkflowInProgress, "")
	if page := string(d.get(t, "/analyses/"+reg.Workflow.ID).body); !strings.Contains(page, `data-summary="true" data-graph="true"`) {
		t.Errorf("analysis page of the default pipeline does not ask for its summary and graph")
	}
}
