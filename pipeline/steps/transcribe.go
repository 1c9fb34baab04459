package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/transcribe"
)

// transcribeSpans is the ocr step for an audio document: it writes each
// span's transcript as the segment's text. Without a recogniser (or
// without the decoder a format needs) the spans are skipped with the
// reason; a span the recogniser cannot read fails with it, and is
// transcribed again by a re-run.
func (h *handlers) transcribeSpans(ctx context.Context, in pipeline.StepInput, units []unitInfo) (outcome, error) {
	var todo []int
	for i, u := range units {
		if u.Audio != nil && !u.TranscriptDone {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return outcome{message: "every span is transcribed"}, nil
	}
	prep, path, cleanup, err := h.preparedSource(ctx, in.Workflow)
	if err != nil {
		return outcome{}, err
	}
	defer cleanup()
	reason := "transcription skipped: no speech recogniser configured"
	available := false
	if h.Transcriber != nil {
		available, reason = h.Transcriber.Available(prep.Format)
	}
	if !available {
		return h.skipSpans(ctx, in.Workflow, units, todo, reason)
	}
	doc, err := h.Repo.GetDocument(ctx, in.Workflow.ProjectID, in.Workflow.DocumentID)
	if err != nil {
		return outcome{}, storageErr("read document", err)
	}
	job := transcribe.Job{
		Name:        in.Workflow.WorkflowID,
		Path:        path,
		Key:         doc.BlobKey,
		Format:      prep.Format,
		Dir:         h.TempDir,
		Parallelism: h.parallelism(),
		Spans:       make([]extract.Span, len(todo)),
	}
	for k, i := range todo {
		job.Spans[k] = *units[i].Audio
	}
	results, err := h.Transcriber.Transcribe(ctx, job)
	var unavailable *transcribe.UnavailableError
	if errors.As(err, &unavailable) {
		return h.skipSpans(ctx, in.Workflow, units, todo, unavailable.Reason)
	}
	if err != nil {
		return outcome{}, err
	}
	if len(results) != len(todo) {
		return outcome{}, fmt.Errorf("%s returned %d transcripts for %d spans", h.Transcriber.Name(), len(results), len(todo))
	}
	done := 0
	for k, i := range todo {
		r := results[k]
		if r.Err != "" {
			units[i].TranscriptError = r.Err
			continue
		}
		if err := blob.PutBytes(ctx, h.Blobs, pipeline.SegmentTextBlobKey(in.Workflow, units[i].Index), []byte(r.Text)); err != nil {
			return outcome{}, storageErr("write transcript", err)
		}
		units[i].TranscriptDone, units[i].TranscriptError, units[i].SkipReason = true, "", ""
		units[i].Chars = len(r.Text)
		done++
	}
	if err := h.putJSON(ctx, pipeline.UnitsBlobKey(in.Workflow), units); err != nil {
		return outcome{}, err
	}
	return outcome{message: fmt.Sprintf("%d of %d spans transcribed with %s", done, len(todo), h.Transcriber.Name())}, nil
}

// skipSpans records why the spans have no transcript.
func (h *handlers) skipSpans(ctx context.Context, ref pipeline.WorkflowRef, units []unitInfo, todo []int, reason string) (outcome, error) {
	for _, i := range todo {
		units[i].SkipReason = reason
	}
	if err := h.putJSON(ctx, pipeline.UnitsBlobKey(ref), units); err != nil {
		return outcome{}, err
	}
	return outcome{status: pipeline.StepSkipped, message: fmt.Sprintf("%d spans skipped: %s", len(todo), reason)}, nil
}
