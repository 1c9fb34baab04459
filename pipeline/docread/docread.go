// Package docread reads what a finished workflow left in the blob store,
// segment by segment: each segment's text, kind, audio span and the
// outputs of the stages that ran on it, and the outputs of the document
// stages. Search indexes it and export writes it. It reads one manifest
// batch at a time, so a 30,000-page document is never held whole.
package docread

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// AnalysisOutput is the name under which the built-in analyzer's result
// (language, keywords, entities, summary) appears among a segment's
// outputs; SummaryOutput the built-in document summary's among the
// document's.
const (
	AnalysisOutput = "analysis"
	SummaryOutput  = "summary"
)

// Segment is one segment of a finished workflow.
type Segment struct {
	Index int
	Kind  string        // "page", "section" or "span"
	Audio *extract.Span // the stretch of sound a "span" covers
	// Text is the segment's text as the pipeline left it: what was
	// extracted (or recognised), replaced by the "text" of each segment
	// stage that answers one (a redaction), in the pipeline's order.
	Text string
	// Outputs are the segment stages' outputs by stage name, as each
	// answered (AnalysisOutput for the built-in analyzer). A stage that
	// failed or skipped the segment has none.
	Outputs map[string]json.RawMessage
}

// textReaders is how many segment texts are read at once: on S3 each is
// a request whose latency, not bandwidth, is the cost.
const textReaders = 16

// unit is the part of the units blob docread needs.
type unit struct {
	Index int           `json:"index"`
	Kind  string        `json:"kind"`
	Audio *extract.Span `json:"audio,omitempty"`
	// TextKey is where the text is when the workflow reused another's
	// extraction; else it is the workflow's own (SegmentTextBlobKey).
	TextKey string `json:"text_key,omitempty"`
}

// Segments calls fn with every segment of the workflow ref in index
// order. order is the pipeline's stages in order, which decides whose
// replacement text comes last; stages it does not name come after, by
// name. A workflow that never got as far as splitting its document has
// none. fn's error stops the walk and is returned.
func Segments(ctx context.Context, blobs blob.Store, ref pipeline.WorkflowRef, order []string, fn func(Segment) error) error {
	var units []unit
	found, err := getJSON(ctx, blobs, pipeline.UnitsBlobKey(ref), &units)
	if err != nil || !found || len(units) == 0 {
		return err
	}
	var batches []pipeline.Batch
	if _, err := getJSON(ctx, blobs, pipeline.ManifestBlobKey(ref), &batches); err != nil {
		return err
	}
	if len(batches) == 0 {
		// No segment stage ran: the segments are there, with no outputs.
		batches = []pipeline.Batch{{Batch: 0, From: 1, To: len(units)}}
	}
	segStages, _, err := stageNames(ctx, blobs, ref)
	if err != nil {
		return err
	}
	for _, b := range batches {
		outputs, err := batchOutputs(ctx, blobs, ref, b.Batch, segStages)
		if err != nil {
			return err
		}
		segs := make([]Segment, 0, b.To-b.From+1)
		textKeys := make([]string, 0, b.To-b.From+1)
		for i := b.From; i <= b.To && i <= len(units); i++ {
			u := units[i-1]
			segs = append(segs, Segment{Index: u.Index, Kind: u.Kind, Audio: u.Audio, Outputs: outputs[u.Index]})
			textKeys = append(textKeys, cmp.Or(u.TextKey, pipeline.SegmentTextBlobKey(ref, u.Index)))
		}
		if err := readTexts(ctx, blobs, segs, textKeys); err != nil {
			return err
		}
		for _, s := range segs {
			s.Text = replacedText(s, segStages, order)
			if err := fn(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// DocumentOutputs returns the document stages' outputs by stage name:
// SummaryOutput for the built-in summary, and every user's document stage
// that left one, or reused one that another workflow left (prog, the
// workflow's step item, says which).
func DocumentOutputs(ctx context.Context, blobs blob.Store, ref pipeline.WorkflowRef, prog pipeline.StepProgress) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	raw, found, err := get(ctx, blobs, prog.OutputBlobKey(ref, pipeline.SummaryBlobKey(ref)))
	if err != nil {
		return nil, err
	}
	if found {
		out[SummaryOutput] = raw
	}
	_, docStages, err := stageNames(ctx, blobs, ref)
	if err != nil {
		return nil, err
	}
	for name := range prog.Steps {
		own := pipeline.StageOutputBlobKey(ref, name)
		if prog.OutputBlobKey(ref, own) != own && !slices.Contains(docStages, name) {
			docStages = append(docStages, name)
		}
	}
	for _, name := range docStages {
		raw, found, err := get(ctx, blobs, prog.OutputBlobKey(ref, pipeline.StageOutputBlobKey(ref, name)))
		if err != nil {
			return nil, err
		}
		if found && json.Valid(raw) {
			out[name] = raw
		}
	}
	return out, nil
}

// stageNames lists the users' stages that left outputs: segment stages
// (batches of JSON Lines) and document stages (one output.json), each
// sorted by name.
func stageNames(ctx context.Context, blobs blob.Store, ref pipeline.WorkflowRef) (segment, document []string, err error) {
	prefix := pipeline.StagesBlobPrefix(ref)
	infos, err := blobs.List(ctx, prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("list stage outputs of %s: %w", ref.WorkflowID, err)
	}
	for _, in := range infos {
		name, file, ok := strings.Cut(strings.TrimPrefix(in.Key, prefix), "/")
		if !ok {
			continue
		}
		switch {
		case file == "output.json":
			document = append(document, name)
		case strings.HasPrefix(file, "batch-") && strings.HasSuffix(file, ".jsonl"):
			if len(segment) == 0 || segment[len(segment)-1] != name {
				segment = append(segment, name)
			}
		}
	}
	slices.Sort(segment)
	segment = slices.Compact(segment)
	slices.Sort(document)
	return segment, document, nil
}

// batchOutputs reads the outputs of one batch, by segment index and stage.
func batchOutputs(ctx context.Context, blobs blob.Store, ref pipeline.WorkflowRef, batch int, stages []string) (map[int]map[string]json.RawMessage, error) {
	out := map[int]map[string]json.RawMessage{}
	add := func(index int, stage string, v json.RawMessage) {
		if len(v) == 0 || string(v) == "null" {
			return
		}
		if out[index] == nil {
			out[index] = map[string]json.RawMessage{}
		}
		out[index][stage] = v
	}
	if batch == 0 {
		return out, nil
	}
	key := pipeline.BatchAnalysisBlobKey(ref, batch)
	switch raw, found, err := get(ctx, blobs, key); {
	case err != nil:
		return nil, err
	case found:
		entries, err := stageoutput.DecodeAnalysis[jsontext.Value](key, raw)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Result != nil {
				add(e.Index, AnalysisOutput, json.RawMessage(*e.Result))
			}
		}
	}
	for _, stage := range stages {
		key := pipeline.StageBatchBlobKey(ref, stage, batch)
		raw, found, err := get(ctx, blobs, key)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		lines, err := stageoutput.DecodeLines(key, raw)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			add(l.Index, stage, l.Output)
		}
	}
	return out, nil
}

// readTexts fills in the text of segs from the blobs keys name; a
// segment without one (a page OCR skipped) keeps "".
func readTexts(ctx context.Context, blobs blob.Store, segs []Segment, keys []string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(textReaders)
	for i := range segs {
		g.Go(func() error {
			raw, _, err := get(gctx, blobs, keys[i])
			segs[i].Text = string(raw)
			return err
		})
	}
	return g.Wait()
}

// replacedText is s's text after the stages that replace it, in order.
func replacedText(s Segment, stages, order []string) string {
	text := s.Text
	rank := func(name string) int {
		if i := slices.Index(order, name); i >= 0 {
			return i
		}
		return len(order)
	}
	byOrder := slices.Clone(stages)
	slices.SortStableFunc(byOrder, func(a, b string) int { return rank(a) - rank(b) })
	for _, name := range byOrder {
		var out struct {
			Text *string `json:"text"`
		}
		raw := s.Outputs[name]
		if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &out) == nil && out.Text != nil {
			text = *out.Text
		}
	}
	return text
}

// get reads a blob; found is false when there is none.
func get(ctx context.Context, blobs blob.Store, key string) (raw []byte, found bool, err error) {
	rc, err := blobs.Get(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", key, err)
	}
	defer rc.Close()
	raw, err = io.ReadAll(rc)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", key, err)
	}
	return raw, true, nil
}

// getJSON decodes a JSON blob into v; found is false when there is none.
func getJSON(ctx context.Context, blobs blob.Store, key string, v any) (found bool, err error) {
	raw, found, err := get(ctx, blobs, key)
	if err != nil || !found {
		return found, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("corrupt %s: %w", key, err)
	}
	return true, nil
}
