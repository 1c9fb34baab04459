package steps

import (
	"context"
	"fmt"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// forEachAnalysis streams the segment results of the batch analysis blobs
// in manifest order, so a 30,000-page document never has all its results
// in memory at once. Each result is read as R: only the fields its reader
// uses are decoded. Segments without a result (failed) are passed over.
func forEachAnalysis[R any](ctx context.Context, h *handlers, ref pipeline.WorkflowRef, fn func(index int, res *R)) error {
	var manifest []pipeline.Batch
	if err := h.getJSON(ctx, pipeline.ManifestBlobKey(ref), &manifest); err != nil {
		return err
	}
	for _, b := range manifest {
		key := pipeline.BatchAnalysisBlobKey(ref, b.Batch)
		raw, err := h.getArtifact(ctx, key)
		if err != nil {
			return err
		}
		entries, err := stageoutput.DecodeAnalysis[R](key, raw)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Result != nil {
				fn(e.Index, e.Result)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// graphInput is what analyze.GraphBuilder reads of a segment's analysis:
// its keywords and entities. The summary sentences, most of the bytes,
// are skipped unread.
type graphInput struct {
	Keywords []analyze.Keyword `json:"keywords"`
	Entities []analyze.Entity  `json:"entities"`
}

// graphBuilder builds the keyword/entity co-occurrence graph.
func (h *handlers) graphBuilder(ctx context.Context, in pipeline.StepInput, _ *workflowPipeline) (outcome, error) {
	gb := analyze.NewGraphBuilder(analyze.GraphOptions{})
	err := forEachAnalysis(ctx, h, in.Workflow, func(index int, r *graphInput) {
		gb.Add(index, analyze.SegmentResult{Keywords: r.Keywords, Entities: r.Entities})
	})
	if err != nil {
		return outcome{}, err
	}
	g := gb.Graph()
	if err := h.putJSON(ctx, pipeline.GraphBlobKey(in.Workflow), g); err != nil {
		return outcome{}, err
	}
	return outcome{message: fmt.Sprintf("%d nodes, %d edges", len(g.Nodes), len(g.Edges))}, nil
}

// documentSummarizer builds the document summary. It reads the segments'
// analysis, not the graph.
func (h *handlers) documentSummarizer(ctx context.Context, in pipeline.StepInput, _ *workflowPipeline) (outcome, error) {
	sb := analyze.NewSummaryBuilder(analyze.SummaryOptions{})
	err := forEachAnalysis(ctx, h, in.Workflow, func(index int, r *analyze.SegmentResult) {
		sb.Add(index, *r)
	})
	if err != nil {
		return outcome{}, err
	}
	s := sb.Summary()
	if err := h.putJSON(ctx, pipeline.SummaryBlobKey(in.Workflow), s); err != nil {
		return outcome{}, err
	}
	return outcome{message: fmt.Sprintf("%d words, language %s", s.Words, s.Language)}, nil
}
