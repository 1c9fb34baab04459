package steps

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/docpipe/docpipe/pipeline"
)

// extractionCodeVersion is part of the extraction's cache key: bump it
// when what format_parser or ocr leave for the same source changes.
const extractionCodeVersion = "extraction/1"

// Extraction is reused as a whole: what format_parser and ocr leave (the
// document's attributes, the units and their text) is a function of the
// source's bytes, the two stages' definitions and this machine's
// extractors, all in the key. It is offered once ocr is done (by
// segment_builder, which reads the final units), and reused by
// format_parser; the units of a reuse point at the producer's text
// (unitInfo.TextKey), so no text is copied. Audio and unfinished OCR are
// not reused.

// extractionKey is the cache key of the workflow's extraction, "" when
// the cache is off for it.
func (h *handlers) extractionKey(ctx context.Context, ref pipeline.WorkflowRef, pipe *workflowPipeline) (string, error) {
	st, ok := pipe.def.Stage(pipeline.StepFormatParser)
	if !ok || !h.cacheOn(ctx, st) {
		return "", nil
	}
	k := pipeline.NewCacheKey(st, extractionCodeVersion)
	if o, ok := pipe.def.Stage(pipeline.StepOCR); ok {
		if o.NoCache {
			return "", nil
		}
		def, _ := json.Marshal(o.Run)
		k.Add("ocr", def)
	}
	doc, err := h.Repo.GetDocument(ctx, ref.ProjectID, ref.DocumentID)
	if err != nil {
		return "", storageErr("read document", err)
	}
	pdf, ocrName, ocrOK, ocrWhy := "", "", false, ""
	if h.PDF != nil {
		pdf = h.PDF.Name()
	}
	if h.OCR != nil {
		ocrName = h.OCR.Name()
		ocrOK, ocrWhy = h.OCR.Available()
	}
	env, _ := json.Marshal(struct {
		PDF, OCR, OCRWhy, PageImages string
		OCROK                        bool
		Limits                       any
	}{pdf, ocrName, ocrWhy, h.PageImages, ocrOK, h.Limits.WithDefaults()})
	k.Add("source", []byte(doc.SHA256)).Add("machine", env)
	return k.Sum(), nil
}

// reuseExtraction answers format_parser from the cache: the producer's
// document attributes, and its units pointing at its text. ok is false
// for a miss or an extraction that cannot be reused.
func (h *handlers) reuseExtraction(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (outcome, bool, error) {
	key, err := h.extractionKey(ctx, in.Workflow, pipe)
	if err != nil || key == "" {
		return outcome{}, false, err
	}
	e, found, err := h.Repo.LookupStageCache(ctx, key)
	if err != nil {
		return outcome{}, false, storageErr("read stage cache", err)
	}
	if !found || e.Workflow.WorkflowID == in.Workflow.WorkflowID {
		return outcome{}, false, nil
	}
	from := e.Workflow
	var units []unitInfo
	var doc pipeline.DocAttrs
	if err := h.getJSON(ctx, e.Blob, &units); err != nil {
		return outcome{}, false, nil // gone since: run
	}
	if err := h.getJSON(ctx, pipeline.DocAttrsBlobKey(from), &doc); err != nil {
		return outcome{}, false, nil
	}
	if len(units) == 0 || slices.ContainsFunc(units, func(u unitInfo) bool {
		return u.Audio != nil || u.NeedsOCR && !u.OCRDone && u.SkipReason == "" && u.OCRError == ""
	}) {
		return outcome{}, false, nil
	}
	for i, u := range units {
		if !u.NeedsOCR || u.OCRDone {
			units[i].TextKey = cmp.Or(u.TextKey, pipeline.SegmentTextBlobKey(from, u.Index))
		}
	}
	if err := h.putJSON(ctx, pipeline.DocAttrsBlobKey(in.Workflow), doc); err != nil {
		return outcome{}, false, err
	}
	if err := h.putJSON(ctx, pipeline.UnitsBlobKey(in.Workflow), units); err != nil {
		return outcome{}, false, err
	}
	total := len(units)
	return outcome{message: fmt.Sprintf("%d %ss reused from %s", total, units[0].Kind, from.WorkflowID), doc: &doc,
		info: &pipeline.WorkflowInfo{TotalSegments: &total}, reusedFrom: from.WorkflowID}, true, nil
}

// extractionOffer is the stage cache entry offering the workflow's
// finished extraction (its units, final once ocr is done), recorded with
// segment_builder's completion.
func (h *handlers) extractionOffer(ctx context.Context, ref pipeline.WorkflowRef, pipe *workflowPipeline) ([]pipeline.CachedOutput, error) {
	key, err := h.extractionKey(ctx, ref, pipe)
	if err != nil || key == "" {
		return nil, err
	}
	return []pipeline.CachedOutput{{Key: key, Stage: pipeline.StepFormatParser, Workflow: ref, Blob: pipeline.UnitsBlobKey(ref)}}, nil
}
