package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Blob layout: the only place blob keys are spelled out. The uploaded
// original sits under its document, what a fetched URL was registered as
// under <project>/web/; everything a workflow writes sits
// under <project>/<document>/<workflow>/:
//
//	prep.json                     what segment_prep found (format, pages)
//	units.json                    one entry per segment: kind, size, OCR state
//	segments/000001/text.txt      each segment's text (one PUT per segment)
//	segments/000001/page.png      the page as an image, with --page-images png
//	manifest.json                 the batches the Distributed Map fans out
//	analysis/batch-000001.json    analysis of one batch (one PUT per batch)
//	graph.json, summary.json      document results
//	doc.json                      what format_parser learned: format, language, pages
//	stages/<name>/output.json     a user's document stage's output
//	stages/<name>/batch-000001.jsonl  a user's segment stage's outputs for one batch
//
// Analysis is written per batch rather than per segment to keep S3 PUTs
// near one per page. Indices are zero-padded to 6 digits so that listing
// order is index order.
//
// Retention: outputs are shared by reference. A stage cache entry
// (CachedOutput) names a blob under the workflow that produced it, and
// later workflows reuse what it holds; a document stage that reuses an
// output points at that blob (StepState.Output) rather than copying it.
// So a workflow's blobs must outlive it while an entry or another
// workflow's step names them. Nothing deletes a workflow's blobs today:
// docpipe has no purge, and the bucket's lifecycle expires current
// objects only under the uploads' incoming prefix (terraform's
// TestLifecycleExpiresOnlyUploads keeps it so). Whatever deletes them
// first must drop the cache entries naming them and keep the blobs some
// workflow's step points at (a lookup already treats an entry whose blob
// is gone as a miss; a pointing workflow has no other copy). The one
// deletion there is, rerun --from's of a segment stage's batches
// (SegmentStageBlobPrefix), removes nothing a step points at: only
// document stage outputs are pointed at.

// OutputBlobKey is the blob holding the output the workflow ref keeps
// under its own key own (GraphBlobKey, StageOutputBlobKey...): own itself,
// unless a completed stage of the workflow reused that output from
// another workflow, whose blob it then points at (StepState.Output).
// Every reader of a document stage's output goes through it.
func (p StepProgress) OutputBlobKey(ref WorkflowRef, own string) string {
	if step := p.pointingStep(ref, own); step != "" {
		return p.Steps[step].Output
	}
	return own
}

// pointingStep is the completed step of the workflow ref that points
// its own blob own at another workflow's, "" when none does.
func (p StepProgress) pointingStep(ref WorkflowRef, own string) string {
	name, ok := strings.CutPrefix(own, workflowBlobKey(ref, ""))
	if !ok {
		return ""
	}
	for step, s := range p.Steps {
		if s.Output != "" && s.Status == StepCompleted && blobName(s.Output) == name {
			return step
		}
	}
	return ""
}

// blobName is a workflow's blob key without the workflow's prefix.
func blobName(key string) string {
	parts := strings.SplitN(key, "/", 4)
	if len(parts) < 4 {
		return ""
	}
	return parts[3]
}

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

// SegmentImageBlobKey is where a page rendered as PNG is stored.
func SegmentImageBlobKey(ref WorkflowRef, index int) string {
	return workflowBlobKey(ref, fmt.Sprintf("segments/%06d/page.png", index))
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

// DocAttrsBlobKey is the document's attributes (format, language, pages)
// that format_parser found, which `when` conditions match on.
func DocAttrsBlobKey(ref WorkflowRef) string { return workflowBlobKey(ref, "doc.json") }

// StagesBlobPrefix is the prefix every user's stage output of a workflow
// is stored under.
func StagesBlobPrefix(ref WorkflowRef) string { return workflowBlobKey(ref, "stages/") }

// StageOutputBlobKey is the output of a user's document-scope stage.
func StageOutputBlobKey(ref WorkflowRef, stage string) string {
	return StagesBlobPrefix(ref) + stage + "/output.json"
}

// StageBatchBlobKey is the output of a user's segment-scope stage for one
// manifest batch: JSON Lines, one line per segment.
func StageBatchBlobKey(ref WorkflowRef, stage string, batch int) string {
	return StageBatchesPrefix(ref, stage) + fmt.Sprintf("%06d.jsonl", batch)
}

// StageBatchesPrefix is the prefix of every batch of a user's
// segment-scope stage's outputs (StageBatchBlobKey).
func StageBatchesPrefix(ref WorkflowRef, stage string) string {
	return StagesBlobPrefix(ref) + stage + "/batch-"
}

// SegmentStageBlobPrefix starts the keys of every batch blob segment
// stage st stored for a workflow: the builtin analyzer's analysis
// batches, any other segment stage's JSON Lines.
func SegmentStageBlobPrefix(ref WorkflowRef, st Stage) string {
	if st.Run.Kind() == RunBuiltin && st.Run.Builtin == StepSegmentAnalyzer {
		return workflowBlobKey(ref, "analysis/batch-")
	}
	return workflowBlobKey(ref, "stages/"+st.Name+"/batch-")
}

// WebSourceBlobKey records what a URL (crawled to depth) was last
// registered as, with the validators of its pages, so fetching it again
// unchanged starts no new analysis. Named by a hash: URLs hold characters
// keys may not.
func WebSourceBlobKey(projectID, url string, depth int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\n%d", url, depth))
	return projectID + "/web/" + hex.EncodeToString(sum[:16]) + ".json"
}
