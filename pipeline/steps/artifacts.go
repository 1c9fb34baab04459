package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// maxArtifactBytes bounds what a step loads of one artifact an earlier
// step wrote.
const maxArtifactBytes = 256 << 20

// prepInfo is what segment_prep learned about the document.
type prepInfo struct {
	Format   extract.Format `json:"format"`
	MIMEType string         `json:"mime_type"`
	Encoding string         `json:"encoding,omitempty"`
	Size     int64          `json:"size"`
	Pages    int            `json:"pages,omitempty"`
	// SourceKey is the document's blob key, so that the steps after
	// segment_prep need not read the document item for it.
	SourceKey string `json:"source_key,omitempty"`
	// SHA256 is the document's content hash and PDF the backend that
	// counted its pages, so that a workflow superseding this one may
	// take the count (countedBefore).
	SHA256 string `json:"sha256,omitempty"`
	PDF    string `json:"pdf,omitempty"`
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
	ImageKey   string `json:"image_key,omitempty"`   // the page rendered as PNG
	// TextKey is where the unit's text is when another workflow's
	// extraction was reused ("": this workflow's own segment text).
	TextKey string `json:"text_key,omitempty"`
	// Audio is the span a transcribed unit covers; its text comes from
	// the transcription in the ocr step (SkipReason when no recogniser).
	Audio           *extract.Span `json:"audio,omitempty"`
	TranscriptDone  bool          `json:"transcript_done,omitempty"`
	TranscriptError string        `json:"transcript_error,omitempty"` // recognition ran and failed
}

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
	b, err := h.getArtifact(ctx, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &steperr.InvalidInputError{Reason: fmt.Sprintf("corrupt %s: %v", key, err)}
	}
	return nil
}

// getArtifact reads an artifact an earlier step wrote, as getJSON does,
// for a reader that decodes it itself.
func (h *handlers) getArtifact(ctx context.Context, key string) ([]byte, error) {
	b, err := blob.GetBytes(ctx, h.Blobs, key, maxArtifactBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, &steperr.InvalidInputError{Reason: "missing " + key + " (did an earlier step run?)"}
	}
	if err != nil {
		return nil, storageErr("read "+key, err)
	}
	return b, nil
}

// getOptional reads an artifact that may not exist (yet): found is false
// when it does not.
func (h *handlers) getOptional(ctx context.Context, key string) (raw []byte, found bool, err error) {
	raw, err = blob.GetBytes(ctx, h.Blobs, key, maxArtifactBytes)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, storageErr("read "+key, err)
	}
	return raw, true, nil
}
