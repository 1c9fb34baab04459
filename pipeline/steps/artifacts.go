package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Blobs one workflow writes, under pipeline.WorkflowBlobPrefix:
//
//	prep.json                     what segment_prep found (format, pages)
//	units.json                    one entry per segment: kind, size, OCR state
//	segments/000001/text.txt      each segment's text (one PUT per segment)
//	manifest.json                 the batches the Distributed Map fans out
//	analysis/batch-000001.json    analysis of one batch (one PUT per batch)
//	graph.json, summary.json      document results
//
// Analysis is written per batch rather than per segment to keep S3 PUTs
// near one per page.

const (
	artifactPrep     = "prep.json"
	artifactUnits    = "units.json"
	artifactGraph    = "graph.json"
	artifactSummary  = "summary.json"
	maxArtifactBytes = 256 << 20
)

// prepInfo is what segment_prep learned about the document.
type prepInfo struct {
	Format   extract.Format `json:"format"`
	MIMEType string         `json:"mime_type"`
	Encoding string         `json:"encoding,omitempty"`
	Size     int64          `json:"size"`
	Pages    int            `json:"pages,omitempty"`
}

// unitInfo describes one segment before segment items exist.
type unitInfo struct {
	Index      int    `json:"index"`
	Kind       string `json:"kind"`
	Chars      int    `json:"chars"`
	NeedsOCR   bool   `json:"needs_ocr,omitempty"`
	OCRDone    bool   `json:"ocr_done,omitempty"`
	SkipReason string `json:"skip_reason,omitempty"` // OCR unavailable
	OCRError   string `json:"ocr_error,omitempty"`   // OCR ran and failed
}

func artifactKey(ref pipeline.WorkflowRef, name string) string {
	return pipeline.WorkflowBlobPrefix(ref.ProjectID, ref.DocumentID, ref.WorkflowID) + name
}

// SegmentTextKey is where a segment's text is stored.
func SegmentTextKey(ref pipeline.WorkflowRef, index int) string {
	return pipeline.SegmentBlobPrefix(ref.ProjectID, ref.DocumentID, ref.WorkflowID, index) + "text.txt"
}

// BatchAnalysisKey is where the analysis of one manifest batch is stored.
func BatchAnalysisKey(ref pipeline.WorkflowRef, batch int) string {
	return artifactKey(ref, fmt.Sprintf("analysis/batch-%06d.json", batch))
}

// GraphKey and SummaryKey locate a workflow's document results.
func GraphKey(ref pipeline.WorkflowRef) string   { return artifactKey(ref, artifactGraph) }
func SummaryKey(ref pipeline.WorkflowRef) string { return artifactKey(ref, artifactSummary) }

func (h *handlers) putJSON(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	if err := blob.PutBytes(ctx, h.Blobs, key, b); err != nil {
		return storageErr("write "+key, err)
	}
	return nil
}

// getJSON reads an artifact an earlier step wrote. Its absence means the
// steps ran out of order: not something a retry fixes.
func (h *handlers) getJSON(ctx context.Context, key string, v any) error {
	b, err := blob.GetBytes(ctx, h.Blobs, key, maxArtifactBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return &steperr.InvalidInputError{Reason: "missing " + key + " (did an earlier step run?)"}
	}
	if err != nil {
		return storageErr("read "+key, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &steperr.InvalidInputError{Reason: fmt.Sprintf("corrupt %s: %v", key, err)}
	}
	return nil
}
