package docread_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/docread"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
)

func TestSegmentsCarryTextAndOutputsInPipelineOrder(t *testing.T) {
	ctx := t.Context()
	store, err := dirblob.New(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "D", WorkflowID: "W"}
	for key, body := range map[string]string{
		pipeline.UnitsBlobKey(ref):                    `[{"index":1,"kind":"page"},{"index":2,"kind":"page"},{"index":3,"kind":"span","audio":{"start_ms":5,"end_ms":9}}]`,
		pipeline.SegmentTextBlobKey(ref, 1):           "one a@b.example",
		pipeline.SegmentTextBlobKey(ref, 2):           "two",
		pipeline.ManifestBlobKey(ref):                 `[{"batch":1,"from":1,"to":2},{"batch":2,"from":3,"to":3}]`,
		pipeline.BatchAnalysisBlobKey(ref, 1):         `[{"index":1,"status":"done","result":{"language":"en"}}]`,
		pipeline.StageBatchBlobKey(ref, "zredact", 1): `{"index":1,"output":{"text":"one [EMAIL]"}}` + "\n",
		pipeline.StageBatchBlobKey(ref, "anon", 1):    `{"index":1,"output":{"text":"one [PERSON] [EMAIL]"}}` + "\n" + `{"index":2,"error":"failed"}` + "\n",
		pipeline.StageOutputBlobKey(ref, "classify"):  `{"category":"memo"}`,
		pipeline.SummaryBlobKey(ref):                  `{"language":"en"}`,
	} {
		if err := blob.PutBytes(ctx, store, key, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	var got []docread.Segment
	// The pipeline runs zredact, then anon: anon's text is the last word.
	err = docread.Segments(ctx, store, ref, []string{"zredact", "anon", "segment_analyzer"}, func(s docread.Segment) error {
		got = append(got, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d segments", len(got))
	}
	if got[0].Text != "one [PERSON] [EMAIL]" || string(got[0].Outputs["analysis"]) != `{"language":"en"}` || len(got[0].Outputs) != 3 {
		t.Errorf("segment 1: %q %v", got[0].Text, got[0].Outputs)
	}
	if got[1].Text != "two" || len(got[1].Outputs) != 0 {
		t.Errorf("segment 2 (its stage failed): %q %v", got[1].Text, got[1].Outputs)
	}
	if got[2].Kind != "span" || got[2].Audio == nil || got[2].Audio.EndMS != 9 || got[2].Text != "" {
		t.Errorf("segment 3 (no text stored): %+v", got[2])
	}

	// Without the pipeline's order, stages go by name: zredact last.
	err = docread.Segments(ctx, store, ref, nil, func(s docread.Segment) error {
		if s.Index == 1 && s.Text != "one [EMAIL]" {
			t.Errorf("by name: %q", s.Text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	outs, err := docread.DocumentOutputs(ctx, store, ref, pipeline.StepProgress{})
	if err != nil || len(outs) != 2 || !json.Valid(outs["classify"]) || string(outs["summary"]) != `{"language":"en"}` {
		t.Errorf("document outputs %v, %v", outs, err)
	}

	// A workflow that reused both (the stage cache) stores neither: its
	// step item points at them, and they are read there.
	reuser := pipeline.WorkflowRef{ProjectID: ref.ProjectID, DocumentID: ref.DocumentID, WorkflowID: "W2"}
	prog := pipeline.StepProgress{Steps: map[string]pipeline.StepState{
		"classify":                      {Status: pipeline.StepCompleted, ReusedFrom: ref.WorkflowID, Output: pipeline.StageOutputBlobKey(ref, "classify")},
		pipeline.StepDocumentSummarizer: {Status: pipeline.StepCompleted, ReusedFrom: ref.WorkflowID, Output: pipeline.SummaryBlobKey(ref)},
	}}
	reused, err := docread.DocumentOutputs(ctx, store, reuser, prog)
	if err != nil || len(reused) != 2 || string(reused["classify"]) != string(outs["classify"]) || string(reused["summary"]) != `{"language":"en"}` {
		t.Errorf("reused document outputs %v, %v", reused, err)
	}
}

// A workflow that reused another's extraction has no text blobs of its
// own: its units name the producer's, and that is what is read.
func TestSegmentsOfAReusedExtractionReadTheProducersText(t *testing.T) {
	ctx := t.Context()
	store, err := dirblob.New(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	producer := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "D", WorkflowID: "W1"}
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "D", WorkflowID: "W2"}
	units, _ := json.Marshal([]map[string]any{{"index": 1, "kind": "page", "text_key": pipeline.SegmentTextBlobKey(producer, 1)}})
	for key, body := range map[string]string{
		pipeline.UnitsBlobKey(ref):               string(units),
		pipeline.SegmentTextBlobKey(producer, 1): "the producer's page",
	} {
		if err := blob.PutBytes(ctx, store, key, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	var texts []string
	if err := docread.Segments(ctx, store, ref, nil, func(s docread.Segment) error {
		texts = append(texts, s.Text)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(texts) != 1 || texts[0] != "the producer's page" {
		t.Errorf("texts %q", texts)
	}
}
