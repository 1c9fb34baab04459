// Package stageoutput holds the formats in which a workflow's stages store
// their results in the blob store, and reads them back for people: the
// tokens its AI analyses billed, a document summary as text. The step
// handlers (pipeline/steps) write these formats; the CLI and the dashboard
// read them here, without the handlers.
package stageoutput

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// BatchEntry is one segment's record in a batch analysis blob
// (pipeline.BatchAnalysisBlobKey), a JSON array of them.
type BatchEntry = AnalysisEntry[analyze.SegmentResult]

// AnalysisEntry is a BatchEntry whose result is read as R: the whole
// analyze.SegmentResult, or a struct of only the fields a reader uses,
// whose decoding skips the others.
type AnalysisEntry[R any] struct {
	Index  int                    `json:"index"`
	Status pipeline.SegmentStatus `json:"status"`
	Error  string                 `json:"error,omitempty"`
	Result *R                     `json:"result,omitempty"`
}

// DecodeAnalysis parses a batch analysis blob (key names it in the
// error). The blobs are written by encoding/json and read here with
// github.com/go-json-experiment/json (the proposed encoding/json/v2),
// which decodes them in about half the time: the graph and the summary
// steps each read a document's whole analysis. It is stricter about
// invalid UTF-8 and repeated names, neither of which encoding/json writes.
func DecodeAnalysis[R any](key string, raw []byte) ([]AnalysisEntry[R], error) {
	var entries []AnalysisEntry[R]
	if err := jsonv2.Unmarshal(raw, &entries); err != nil {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("corrupt %s: %v", key, err)}
	}
	return entries, nil
}

// DecodeResult parses one segment's analysis result kept encoded (an
// AnalysisEntry[jsontext.Value]'s) into R, with DecodeAnalysis's decoder:
// a struct of the fields wanted is decoded several times faster than the
// whole analyze.SegmentResult.
func DecodeResult[R any](raw []byte) (R, error) {
	var r R
	err := jsonv2.Unmarshal(raw, &r)
	return r, err
}

// Line is one segment's line in a segment stage's batch results
// (pipeline.StageBatchBlobKey, JSON Lines): its output, or why the stage
// failed it, and for an AI analysis the model and what it billed.
type Line struct {
	Index    int             `json:"index"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    string          `json:"error,omitempty"`
	Model    string          `json:"model,omitempty"`
	Usage    ai.Usage        `json:"usage,omitzero"`
	Requests int             `json:"requests,omitempty"`
	// ReusedFrom names the workflow that produced this answer, when the
	// stage reused it rather than running: its usage was billed there.
	ReusedFrom string `json:"reused_from,omitempty"`
}

// DecodeLines parses a batch's JSON Lines by segment index: the one
// reader of them, with one policy for a corrupt line (key names the blob
// in the error).
func DecodeLines(key string, raw []byte) (map[int]Line, error) {
	lines := map[int]Line{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, len(raw)+1)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("corrupt %s: %v", key, err)}
		}
		lines[l.Index] = l
	}
	if err := sc.Err(); err != nil {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("corrupt %s: %v", key, err)}
	}
	return lines, nil
}

// SegmentLines reads every batch of a segment stage's results (each blob
// at most limit bytes) and returns their lines in segment order.
func SegmentLines(ctx context.Context, blobs blob.Store, ref pipeline.WorkflowRef, stage string, limit int64) ([]Line, error) {
	infos, err := blobs.List(ctx, pipeline.StageBatchesPrefix(ref, stage))
	if err != nil {
		return nil, err
	}
	var lines []Line
	for _, info := range infos {
		raw, err := blob.GetBytes(ctx, blobs, info.Key, limit)
		if err != nil {
			return nil, err
		}
		batch, err := DecodeLines(info.Key, raw)
		if err != nil {
			return nil, err
		}
		for _, l := range batch {
			lines = append(lines, l)
		}
	}
	slices.SortFunc(lines, func(a, b Line) int { return a.Index - b.Index })
	return lines, nil
}

// EncodeLines writes lines in index order as JSON Lines.
func EncodeLines(lines []Line) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// AIDocument is a document-scope AI analysis's stored output
// (pipeline.StageOutputBlobKey).
type AIDocument struct {
	Output   json.RawMessage `json:"output"`
	Model    string          `json:"model"`
	Usage    ai.Usage        `json:"usage"`
	Requests int             `json:"requests"`
	Segments int             `json:"segments"`
	// ReusedFrom names the workflow that produced this output, when the
	// stage reused it: its usage was billed there.
	ReusedFrom string `json:"reused_from,omitempty"`
}
