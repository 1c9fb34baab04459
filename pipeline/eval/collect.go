package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// maxOutputBytes bounds what is read of one result blob.
const maxOutputBytes = 256 << 20

// Collect reads what a workflow produced: its document summary, the
// outputs of its pipeline's own stages (not builtins or reviews), and
// its segments' texts.
func Collect(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, prog pipeline.StepProgress) (Outputs, error) {
	ref := pipeline.WorkflowRef{ProjectID: prog.ProjectID, DocumentID: prog.DocumentID, WorkflowID: prog.WorkflowID}
	var o Outputs
	var err error
	if o.Summary, err = optionalBlob(ctx, blobs, prog.OutputBlobKey(ref, pipeline.SummaryBlobKey(ref))); err != nil {
		return o, err
	}
	def, err := repo.Definition(ctx, prog.Pipeline, prog.PipelineVersion)
	if err != nil {
		return o, fmt.Errorf("workflow %s: %w", prog.WorkflowID, err)
	}
	o.Stages = map[string]StageOutput{}
	for _, st := range def.Stages {
		if k := st.Run.Kind(); k == pipeline.RunBuiltin || k == pipeline.RunReview {
			continue
		}
		var out StageOutput
		if st.Scope == pipeline.ScopeDocument {
			out.Document, err = optionalBlob(ctx, blobs, prog.OutputBlobKey(ref, pipeline.StageOutputBlobKey(ref, st.Name)))
		} else {
			out.Segments, err = segmentOutputs(ctx, blobs, ref, st.Name)
		}
		if err != nil {
			return o, err
		}
		if out.Document != nil || out.Segments != nil {
			o.Stages[st.Name] = out
		}
	}
	o.Pages, err = pageTexts(ctx, repo, blobs, prog.WorkflowID)
	return o, err
}

func optionalBlob(ctx context.Context, blobs blob.Store, key string) (json.RawMessage, error) {
	raw, err := blob.GetBytes(ctx, blobs, key, maxOutputBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, nil
	}
	return raw, err
}

// segmentOutputs reads a segment stage's outputs in index order; failed
// segments have none.
func segmentOutputs(ctx context.Context, blobs blob.Store, ref pipeline.WorkflowRef, stage string) ([]json.RawMessage, error) {
	lines, err := stageoutput.SegmentLines(ctx, blobs, ref, stage, maxOutputBytes)
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	for _, l := range lines {
		if l.Output != nil {
			out = append(out, l.Output)
		}
	}
	return out, nil
}

// pageTexts is every segment's text, by index; a segment without text
// (skipped, failed) is "".
func pageTexts(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, workflowID string) ([]string, error) {
	var pages []string
	err := repo.EachSegment(ctx, workflowID, func(s pipeline.Segment) error {
		if s.Index < 1 {
			return nil // segments count from 1
		}
		for len(pages) < s.Index {
			pages = append(pages, "")
		}
		if s.TextKey == "" {
			return nil
		}
		raw, err := optionalBlob(ctx, blobs, s.TextKey)
		pages[s.Index-1] = string(raw)
		return err
	})
	return pages, err
}
