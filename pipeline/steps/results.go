package steps

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
)

// DocumentSummary is the stored summary of a document.
type DocumentSummary = analyze.DocumentSummary

// forEachAnalysis streams the batch analysis blobs in manifest order, so a
// 30,000-page document never has all its results in memory at once.
func (h *handlers) forEachAnalysis(ctx context.Context, ref pipeline.WorkflowRef, fn func(BatchEntry)) error {
	var manifest []pipeline.Batch
	if err := h.getJSON(ctx, pipeline.ManifestBlobKey(ref), &manifest); err != nil {
		return err
	}
	for _, b := range manifest {
		var entries []BatchEntry
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
	err := h.forEachAnalysis(ctx, in.Workflow, func(e BatchEntry) {
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
	err := h.forEachAnalysis(ctx, in.Workflow, func(e BatchEntry) {
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

// WriteSummaryText prints a summary for people.
func WriteSummaryText(w io.Writer, s DocumentSummary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "language  %s\nsegments  %d\nwords     %d\n", s.Language, s.Segments, s.Words)
	if len(s.TopKeywords) > 0 {
		terms := make([]string, len(s.TopKeywords))
		for i, k := range s.TopKeywords {
			terms[i] = k.Term
		}
		fmt.Fprintf(&b, "keywords  %s\n", strings.Join(terms, ", "))
	}
	types := make([]string, 0, len(s.TopEntities))
	for t := range s.TopEntities {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		vals := make([]string, 0, len(s.TopEntities[t]))
		for _, e := range s.TopEntities[t][:min(8, len(s.TopEntities[t]))] {
			vals = append(vals, fmt.Sprintf("%s (%d)", e.Value, e.Count))
		}
		fmt.Fprintf(&b, "%-9s %s\n", t, strings.Join(vals, ", "))
	}
	if len(s.Summary) > 0 {
		b.WriteString("\nsummary\n")
		for _, sen := range s.Summary {
			fmt.Fprintf(&b, "  [%d] %s\n", sen.Segment, sen.Text)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
