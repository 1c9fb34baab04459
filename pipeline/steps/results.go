package steps

import (
	"context"
	"fmt"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// forEachAnalysis streams the batch analysis blobs in manifest order, so a
// 30,000-page document never has all its results in memory at once.
func (h *handlers) forEachAnalysis(ctx context.Context, ref pipeline.WorkflowRef, fn func(stageoutput.BatchEntry)) error {
	var manifest []pipeline.Batch
	if err := h.getJSON(ctx, pipeline.ManifestBlobKey(ref), &manifest); err != nil {
		return err
	}
	for _, b := range manifest {
		var entries []stageoutput.BatchEntry
		if err := h.getJSON(ctx, pipeline.BatchAnalysisBlobKey(ref, b.Batch), &entries); err != nil {
			return err
		}
		for _, e := range entries {
			fn(e)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// graphBuilder builds the keyword/entity co-occurrence graph.
func (h *handlers) graphBuilder(ctx context.Context, in pipeline.StepInput, _ *workflowPipeline) (outcome, error) {
	gb := analyze.NewGraphBuilder(analyze.GraphOptions{})
	err := h.forEachAnalysis(ctx, in.Workflow, func(e stageoutput.BatchEntry) {
		if e.Result != nil {
			gb.Add(e.Index, *e.Result)
		}
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

// documentSummarizer builds the document summary.
func (h *handlers) documentSummarizer(ctx context.Context, in pipeline.StepInput, _ *workflowPipeline) (outcome, error) {
	sb := analyze.NewSummaryBuilder(analyze.SummaryOptions{})
	err := h.forEachAnalysis(ctx, in.Workflow, func(e stageoutput.BatchEntry) {
		if e.Result != nil {
			sb.Add(e.Index, *e.Result)
		}
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
