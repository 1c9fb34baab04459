package pipeline

import "fmt"

// Blob layout: the only place blob keys are spelled out. The uploaded
// original sits under its document; everything a workflow writes sits
// under <project>/<document>/<workflow>/:
//
//	prep.json                     what segment_prep found (format, pages)
//	units.json                    one entry per segment: kind, size, OCR state
//	segments/000001/text.txt      each segment's text (one PUT per segment)
//	manifest.json                 the batches the Distributed Map fans out
//	analysis/batch-000001.json    analysis of one batch (one PUT per batch)
//	graph.json, summary.json      document results
//
// Analysis is written per batch rather than per segment to keep S3 PUTs
// near one per page. Indices are zero-padded to 6 digits so that listing
// order is index order.

// SourceBlobKey is where the uploaded original is kept.
func SourceBlobKey(projectID, documentID string) string {
	return projectID + "/" + documentID + "/source"
}

// workflowBlobKey is the key of a blob one workflow writes.
func workflowBlobKey(ref WorkflowRef, name string) string {
	return ref.ProjectID + "/" + ref.DocumentID + "/" + ref.WorkflowID + "/" + name
}

// PrepBlobKey is what segment_prep learned about the document.
func PrepBlobKey(ref WorkflowRef) string { return workflowBlobKey(ref, "prep.json") }

// UnitsBlobKey describes every segment before segment items exist.
func UnitsBlobKey(ref WorkflowRef) string { return workflowBlobKey(ref, "units.json") }

// SegmentTextBlobKey is where a segment's text is stored.
func SegmentTextBlobKey(ref WorkflowRef, index int) string {
	return workflowBlobKey(ref, fmt.Sprintf("segments/%06d/text.txt", index))
}

// ManifestBlobKey is the segment manifest (JSON array of batches) the
// Distributed Map reads.
func ManifestBlobKey(ref WorkflowRef) string { return workflowBlobKey(ref, "manifest.json") }

// BatchAnalysisBlobKey is where the analysis of one manifest batch is
// stored.
func BatchAnalysisBlobKey(ref WorkflowRef, batch int) string {
	return workflowBlobKey(ref, fmt.Sprintf("analysis/batch-%06d.json", batch))
}

// GraphBlobKey and SummaryBlobKey locate a workflow's document results.
func GraphBlobKey(ref WorkflowRef) string   { return workflowBlobKey(ref, "graph.json") }
func SummaryBlobKey(ref WorkflowRef) string { return workflowBlobKey(ref, "summary.json") }
