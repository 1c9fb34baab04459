package pipeline_test

import (
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// The blob layout is a contract with data already stored (and with the
// IAM policies that grant access by prefix): pin every key.
func TestBlobLayout(t *testing.T) {
	t.Parallel()
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}
	for _, k := range []struct{ got, want string }{
		{pipeline.SourceBlobKey("p", "d"), "p/d/source"},
		{pipeline.PrepBlobKey(ref), "p/d/w/prep.json"},
		{pipeline.UnitsBlobKey(ref), "p/d/w/units.json"},
		{pipeline.SegmentTextBlobKey(ref, 12), "p/d/w/segments/000012/text.txt"},
		{pipeline.ManifestBlobKey(ref), "p/d/w/manifest.json"},
		{pipeline.BatchAnalysisBlobKey(ref, 7), "p/d/w/analysis/batch-000007.json"},
		{pipeline.GraphBlobKey(ref), "p/d/w/graph.json"},
		{pipeline.SummaryBlobKey(ref), "p/d/w/summary.json"},
		{pipeline.DocAttrsBlobKey(ref), "p/d/w/doc.json"},
		{pipeline.StageOutputBlobKey(ref, "enrich"), "p/d/w/stages/enrich/output.json"},
		{pipeline.StageBatchBlobKey(ref, "redact", 7), "p/d/w/stages/redact/batch-000007.jsonl"},
		{pipeline.SegmentTextBlobKey(ref, 1_000_000-1), "p/d/w/segments/999999/text.txt"},
	} {
		if k.got != k.want {
			t.Errorf("key = %q, want %q", k.got, k.want)
		}
	}
}
