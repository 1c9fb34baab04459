package stageoutput

import (
	"context"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Lines written are the lines read; a line that is not one fails the read
// as invalid input rather than passing for a segment never answered.
func TestLinesRoundTripAndCorruption(t *testing.T) {
	in := []Line{{Index: 1, Output: []byte(`{"a":"<b>"}`)}, {Index: 2, Error: "refused", Model: "m", Usage: ai.Usage{InputTokens: 3}}}
	raw, err := EncodeLines(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeLines("k", raw)
	if err != nil || len(got) != 2 || string(got[1].Output) != `{"a":"<b>"}` || got[2].Error != "refused" || got[2].Usage.InputTokens != 3 {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	_, err = DecodeLines("batch-7", append(raw, "not json\n"...))
	if steperr.Name(err) != steperr.NameInvalidInput || !strings.Contains(err.Error(), "batch-7") {
		t.Errorf("corrupt line: %v", err)
	}
}

// AIUsage adds what every AI stage billed, by model: a document stage's
// output and each batch of a segment stage; stages that did not run and
// stages that are not AI add nothing.
func TestAIUsage(t *testing.T) {
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
	aiStage := func(name string, scope pipeline.Scope) pipeline.Stage {
		return pipeline.Stage{Name: name, Scope: scope, Run: pipeline.RunSpec{Builtin: pipeline.BuiltinOpenAIAnalyzer}}
	}
	def := pipeline.Definition{Name: "p", Stages: []pipeline.Stage{
		aiStage("seg", pipeline.ScopeSegment), aiStage("doc", pipeline.ScopeDocument), aiStage("unrun", pipeline.ScopeDocument),
		{Name: "cmd", Scope: pipeline.ScopeSegment, Run: pipeline.RunSpec{Command: []string{"x"}}},
	}}
	put(pipeline.ManifestBlobKey(ref), `[{"batch":1,"from":1,"to":2},{"batch":2,"from":3,"to":3}]`)
	put(pipeline.StageBatchBlobKey(ref, "seg", 1), `{"index":1,"model":"small","usage":{"input_tokens":10,"output_tokens":1}}
{"index":2,"error":"refused"}
`)
	put(pipeline.StageBatchBlobKey(ref, "seg", 2), `{"index":3,"model":"small","usage":{"input_tokens":5,"output_tokens":2}}`)
	put(pipeline.StageBatchBlobKey(ref, "cmd", 1), `{"index":1,"model":"small","usage":{"input_tokens":1000}}`)
	put(pipeline.StageOutputBlobKey(ref, "doc"), `{"output":{},"model":"big","usage":{"input_tokens":100,"output_tokens":7}}`)
	got, err := AIUsage(ctx, blobs, ref, def)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["small"] != usage(15, 3) || got["big"] != usage(100, 7) {
		t.Errorf("usage: %+v", got)
	}
}

func usage(in, out int64) ai.Usage { return ai.Usage{InputTokens: in, OutputTokens: out} }

func TestWriteSummaryText(t *testing.T) {
	var b strings.Builder
	s := analyze.DocumentSummary{Language: "en", Segments: 2, Words: 40,
		Summary: []analyze.DocumentSentence{{Segment: 2, Text: "A lease."}}}
	if err := WriteSummaryText(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"language  en\n", "segments  2\n", "words     40\n", "summary\n  [2] A lease.\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary text lacks %q:\n%s", want, b.String())
		}
	}
}

// An analysis batch reads whole or by the fields a reader names; a blob
// that is not one fails as invalid input naming it.
func TestDecodeAnalysis(t *testing.T) {
	raw := []byte(`[{"index":1,"status":"done","result":{"language":"en","keywords":[{"term":"lease","count":2}],"summary":[{"text":"A lease.","score":1.5}],"words":3}},
{"index":2,"status":"failed","error":"refused"}]`)
	whole, err := DecodeAnalysis[analyze.SegmentResult]("k", raw)
	if err != nil || len(whole) != 2 || whole[0].Result.Summary[0].Text != "A lease." || whole[0].Result.Words != 3 || whole[1].Result != nil || whole[1].Error != "refused" {
		t.Fatalf("whole: %+v, %v", whole, err)
	}
	type terms struct {
		Keywords []analyze.Keyword `json:"keywords"`
	}
	narrow, err := DecodeAnalysis[terms]("k", raw)
	if err != nil || len(narrow) != 2 || narrow[0].Result.Keywords[0] != (analyze.Keyword{Term: "lease", Count: 2}) {
		t.Fatalf("narrow: %+v, %v", narrow, err)
	}
	_, err = DecodeAnalysis[terms]("batch-7", []byte(`[{"index":1,"result":{"keywords":"none"}}]`))
	if steperr.Name(err) != steperr.NameInvalidInput || !strings.Contains(err.Error(), "batch-7") {
		t.Errorf("corrupt batch: %v", err)
	}
}
