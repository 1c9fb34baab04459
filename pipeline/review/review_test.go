package review

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
)

// newWorkflow creates a workflow of one document stage, "classify", with
// the summarizer before it, in repo.
func newWorkflow(t *testing.T, repo *pipeline.Repository) pipeline.WorkflowRef {
	t.Helper()
	doc := pipeline.Document{ProjectID: "p", ID: pipeline.NewID(), FileName: "a.txt", SHA256: strings.Repeat("0", 64)}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: "p", DocumentID: doc.ID, FileName: doc.FileName}
	stages := []pipeline.Stage{{Name: pipeline.StepDocumentSummarizer}, {Name: "classify"}}
	if err := repo.CreateWorkflow(t.Context(), doc, wf, stages); err != nil {
		t.Fatal(err)
	}
	return pipeline.WorkflowRef{ProjectID: "p", DocumentID: doc.ID, WorkflowID: wf.ID}
}

func newRepo(t *testing.T) *pipeline.Repository {
	t.Helper()
	tb, err := sqlitetable.Open(t.TempDir() + "/state.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return pipeline.NewRepository(tb)
}

func TestCheckEdit(t *testing.T) {
	def := pipeline.Definition{Name: "p", Stages: []pipeline.Stage{
		{Name: "classify", Scope: pipeline.ScopeDocument, Run: pipeline.RunSpec{Command: []string{"./classify"}}},
		{Name: "parse", Scope: pipeline.ScopeDocument, Run: pipeline.RunSpec{Builtin: pipeline.StepFormatParser}},
	}}
	for name, want := range map[string]string{
		"summary":       "",
		"classify.kind": "",
		"classify":      "want summary or STAGE.FIELD",
		"classify.":     "want summary or STAGE.FIELD",
		"missing.kind":  `has no stage "missing"`,
		"parse.format":  "writes no document JSON output",
	} {
		err := CheckEdit(def, name)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
	}
}

// An approval's edits land in the outputs later stages read: the summary's
// text becomes its one sentence, a stage field takes the value as JSON when
// it parses and as a string otherwise.
func TestApplyEdits(t *testing.T) {
	ctx := context.Background()
	blobs, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := newRepo(t)
	ref := newWorkflow(t, repo)
	put := func(key, v string) {
		if err := blob.PutBytes(ctx, blobs, key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	put(pipeline.SummaryBlobKey(ref), `{"language":"en","summary":[{"text":"old","score":0.5}]}`)
	put(pipeline.StageOutputBlobKey(ref, "classify"), `{"kind":"invoice","pages":3}`)
	err = ApplyEdits(ctx, repo, blobs, ref, map[string]string{"summary": "Checked.", "classify.kind": "receipt", "classify.pages": "4"})
	if err != nil {
		t.Fatal(err)
	}
	var summary analyze.DocumentSummary
	get := func(key string, v any) {
		raw, err := blob.GetBytes(ctx, blobs, key, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
	get(pipeline.SummaryBlobKey(ref), &summary)
	if summary.Language != "en" || len(summary.Summary) != 1 || summary.Summary[0].Text != "Checked." {
		t.Errorf("summary after edit: %+v", summary)
	}
	var out map[string]any
	get(pipeline.StageOutputBlobKey(ref, "classify"), &out)
	if out["kind"] != "receipt" || out["pages"] != 4.0 {
		t.Errorf("stage output after edit: %v", out)
	}
}

// An edit of an output the workflow reused (it points at its producer's
// blob) is the workflow's own: the producer's output, which other
// workflows read, stays as it was, and the workflow reads its edit.
func TestApplyEditsOfReusedOutput(t *testing.T) {
	ctx := context.Background()
	blobs, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := newRepo(t)
	producer, ref := newWorkflow(t, repo), newWorkflow(t, repo)
	const original = `{"kind":"invoice"}`
	if err := blob.PutBytes(ctx, blobs, pipeline.StageOutputBlobKey(producer, "classify"), []byte(original)); err != nil {
		t.Fatal(err)
	}
	reused := pipeline.StepChange{Step: "classify", From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepCompleted,
		ReusedFrom: producer.WorkflowID, Output: pipeline.StageOutputBlobKey(producer, "classify")}
	if _, err := repo.TransitionSteps(ctx, ref, reused); err != nil {
		t.Fatal(err)
	}
	if err := ApplyEdits(ctx, repo, blobs, ref, map[string]string{"classify.kind": "receipt"}); err != nil {
		t.Fatal(err)
	}
	if raw, err := blob.GetBytes(ctx, blobs, pipeline.StageOutputBlobKey(producer, "classify"), 1<<20); err != nil || string(raw) != original {
		t.Errorf("producer's output after the edit: %s, %v", raw, err)
	}
	prog, err := repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	key := prog.OutputBlobKey(ref, pipeline.StageOutputBlobKey(ref, "classify"))
	if raw, err := blob.GetBytes(ctx, blobs, key, 1<<20); err != nil || string(raw) != `{"kind":"receipt"}` {
		t.Errorf("workflow's output after the edit (%s): %s, %v", key, raw, err)
	}
}
