package stageoutput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
)

// maxOutputBytes bounds what a reader loads of one stored output.
const maxOutputBytes = 256 << 20

// AIUsage sums the tokens a workflow's analysis stages billed, by model
// id, from their stored outputs; a stage that has not run adds nothing,
// nor does an output reused from another workflow (billed there).
func AIUsage(ctx context.Context, blobs blob.Store, ref pipeline.WorkflowRef, def pipeline.Definition) (map[string]ai.Usage, error) {
	get := func(key string) ([]byte, error) {
		raw, err := blob.GetBytes(ctx, blobs, key, maxOutputBytes)
		if errors.Is(err, blob.ErrNotFound) {
			return nil, nil
		}
		return raw, err
	}
	usage := map[string]ai.Usage{}
	var manifest []pipeline.Batch
	for _, st := range def.Stages {
		if st.Run.Kind() != pipeline.RunBuiltin || !slices.Contains(pipeline.AIBuiltins, st.Run.Builtin) {
			continue
		}
		if st.Scope != pipeline.ScopeSegment {
			raw, err := get(pipeline.StageOutputBlobKey(ref, st.Name))
			if err != nil {
				return usage, err
			}
			if raw == nil {
				continue
			}
			var out AIDocument
			if err := json.Unmarshal(raw, &out); err != nil {
				return usage, fmt.Errorf("stage %s output: %w", st.Name, err)
			}
			if out.ReusedFrom == "" {
				usage[out.Model] = usage[out.Model].Add(out.Usage)
			}
			continue
		}
		if manifest == nil {
			raw, err := get(pipeline.ManifestBlobKey(ref))
			if err != nil {
				return usage, err
			}
			if raw == nil {
				continue // never split into segments: no segment ran
			}
			if err := json.Unmarshal(raw, &manifest); err != nil {
				return usage, fmt.Errorf("manifest: %w", err)
			}
		}
		for _, b := range manifest {
			key := pipeline.StageBatchBlobKey(ref, st.Name, b.Batch)
			raw, err := get(key)
			if err != nil {
				return usage, err
			}
			lines, err := DecodeLines(key, raw)
			if err != nil {
				return usage, err
			}
			for _, l := range lines {
				if l.Model != "" && l.ReusedFrom == "" {
					usage[l.Model] = usage[l.Model].Add(l.Usage)
				}
			}
		}
	}
	return usage, nil
}

// WriteSummaryText prints a summary for people.
func WriteSummaryText(w io.Writer, s analyze.DocumentSummary) error {
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
