package steps

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docpipe/docpipe/pipeline"
)

// builtinOutputKey is the blob a builtin stage leaves as its output, the
// file a user's stage that needs it reads.
func builtinOutputKey(builtin string, ref pipeline.WorkflowRef) string {
	switch builtin {
	case pipeline.StepSegmentPrep:
		return pipeline.PrepBlobKey(ref)
	case pipeline.StepFormatParser:
		return pipeline.DocAttrsBlobKey(ref)
	case pipeline.StepOCR:
		return pipeline.UnitsBlobKey(ref)
	case pipeline.StepSegmentBuilder:
		return pipeline.ManifestBlobKey(ref)
	case pipeline.StepGraphBuilder:
		return pipeline.GraphBlobKey(ref)
	case pipeline.StepDocumentSummarizer:
		return pipeline.SummaryBlobKey(ref)
	}
	return ""
}

// documentNeeds writes the outputs of the stages job's stage needs into
// its folder and returns their paths. A document stage's output is its
// JSON; a segment stage's is every segment's text as that stage left it
// (segmentsFile). A needed stage that was skipped has no output and is
// left out.
func (h *handlers) documentNeeds(ctx context.Context, ref pipeline.WorkflowRef, pipe *workflowPipeline, job *stageJob) (map[string]string, error) {
	needs := map[string]string{}
	if err := os.MkdirAll(filepath.Join(job.dir, "needs"), 0o700); err != nil {
		return nil, fmt.Errorf("needs folder: %w", err)
	}
	for _, name := range job.st.Needs {
		n, _ := pipe.def.Stage(name)
		if n.Scope == pipeline.ScopeSegment {
			path := filepath.Join(job.dir, "needs", name+".jsonl")
			if !job.local {
				path = filepath.Join(job.dir, "needs", name+".json")
			}
			if err := h.segmentsFile(ctx, ref, pipe, n, path, !job.local); err != nil {
				return nil, err
			}
			needs[name] = path
			continue
		}
		key, err := h.documentOutputKey(ctx, ref, n)
		if err != nil {
			return nil, err
		}
		raw, found, err := h.getOptional(ctx, key)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		path := filepath.Join(job.dir, "needs", name+".json")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			return nil, fmt.Errorf("write input: %w", err)
		}
		needs[name] = path
	}
	return needs, nil
}

// segmentsLine is one segment in a segment stage's output as a document
// stage reads it.
type segmentsLine struct {
	Index  int             `json:"index"`
	Text   string          `json:"text"`
	Output json.RawMessage `json:"output,omitempty"` // a user's stage's output for the segment
}

// segmentsFile writes every segment's text as segment stage n left it, in
// index order: JSON Lines for a command, one JSON array for a remote
// stage (its inputs travel inline, as JSON). Segments n or a stage before
// it failed, and segments without text, are left out.
func (h *handlers) segmentsFile(ctx context.Context, ref pipeline.WorkflowRef, pipe *workflowPipeline, n pipeline.Stage, path string, array bool) error {
	var manifest []pipeline.Batch
	if err := h.getJSON(ctx, pipeline.ManifestBlobKey(ref), &manifest); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write input: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	first := true
	if array {
		w.WriteString("[")
	}
	stages := append(pipe.segmentAncestors(n.Name), n)
	for _, b := range manifest {
		segs, err := h.Repo.SegmentsInRange(ctx, ref.WorkflowID, b.From, b.To)
		if err != nil {
			return storageErr("read segments", err)
		}
		view, err := h.batchView(ctx, ref, stages, b.Batch)
		if err != nil {
			return err
		}
		outputs, err := h.stageLines(ctx, ref, n, b.Batch)
		if err != nil {
			return err
		}
		for _, s := range segs {
			text, status, _, err := h.readSegment(ctx, s, view)
			if err != nil {
				return err
			}
			if status != "" {
				continue
			}
			if array && !first {
				w.WriteString(",")
			}
			first = false
			if err := enc.Encode(segmentsLine{Index: s.Index, Text: text, Output: outputs[s.Index].Output}); err != nil {
				return fmt.Errorf("write input: %w", err)
			}
		}
	}
	if array {
		w.WriteString("]")
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write input: %w", err)
	}
	return f.Close()
}

// segmentStageNeeds gathers what a segment stage needs: the document
// stages' outputs as files (shared by every segment), and, by segment,
// the output each needed segment stage gave for it.
func (h *handlers) segmentStageNeeds(ctx context.Context, ref pipeline.WorkflowRef, pipe *workflowPipeline, job *stageJob, batch int) (map[string]string, map[int]map[string]json.RawMessage, error) {
	docJob := *job
	docJob.st.Needs = nil
	perSegment := map[int]map[string]json.RawMessage{}
	add := func(index int, stage string, raw json.RawMessage) {
		if perSegment[index] == nil {
			perSegment[index] = map[string]json.RawMessage{}
		}
		perSegment[index][stage] = raw
	}
	for _, name := range job.st.Needs {
		n, _ := pipe.def.Stage(name)
		if n.Scope != pipeline.ScopeSegment {
			docJob.st.Needs = append(docJob.st.Needs, name)
			continue
		}
		lines, err := h.stageLines(ctx, ref, n, batch)
		if err != nil {
			return nil, nil, err
		}
		for i, l := range lines {
			if l.Error == "" {
				add(i, name, l.Output)
			}
		}
	}
	docNeeds, err := h.documentNeeds(ctx, ref, pipe, &docJob)
	return docNeeds, perSegment, err
}
