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
)

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
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}
	put := func(key, v string) {
		if err := blob.PutBytes(ctx, blobs, key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	put(pipeline.SummaryBlobKey(ref), `{"language":"en","summary":[{"text":"old","score":0.5}]}`)
	put(pipeline.StageOutputBlobKey(ref, "classify"), `{"kind":"invoice","pages":3}`)
	err = ApplyEdits(ctx, blobs, ref, map[string]string{"summary": "Checked.", "classify.kind": "receipt", "classify.pages": "4"})
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
