package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// maxSegmentTextBytes bounds one segment's text read into memory; segments
// are pages or bounded sections, so anything bigger is corrupt.
const maxSegmentTextBytes = 64 << 20

// ocrFailedPrefix starts the reason of a page OCR could not read.
const ocrFailedPrefix = "OCR failed"

// segmentKeywords is how many keywords the segment item keeps; the full
// analysis lives in the batch blob.
const segmentKeywords = 5

// analyzerKind is the builtin segment_analyzer: keywords, entities,
// language and a short summary per segment, computed in process.
type analyzerKind struct{}

func (analyzerKind) store() batchStore { return analysisStore{} }

func (analyzerKind) open(_ context.Context, h *handlers, _ pipeline.StepInput, _ *workflowPipeline, _ pipeline.Stage) (segmentWork, func(), error) {
	return eachSegment(h.parallelism(), analyzeOne), func() {}, nil
}

func (analyzerKind) summary(l stageLine) (string, []string) {
	res, err := readAnalysisHead(l.Output)
	if err != nil {
		return "", nil
	}
	return res.Language, res.keywords()
}

// analysisHead is what a segment item keeps of an analysis
// (analysisSummary), read alone from an answer kept encoded.
type analysisHead struct {
	Language string
	Keywords []string // the first segmentKeywords terms
}

func (a analysisHead) keywords() []string {
	return firstKeywords(a.Keywords, func(k string) string { return k })
}

// readAnalysisHead reads an analysis's language and first keywords, and
// stops there: a reused answer is summarised for every segment of a
// backfill, and the rest of it (all its keywords, entities, sentences)
// is most of its bytes. raw is an answer as stored, which was valid JSON
// when read (stageoutput.DecodeLines); the encoder writes language and
// keywords first, though any order is read.
func readAnalysisHead(raw []byte) (analysisHead, error) {
	var h analysisHead
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return h, fmt.Errorf("an analysis is not an object: %v", err)
	}
	var sawLanguage, sawKeywords bool
	for !(sawLanguage && sawKeywords) && dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return h, err
		}
		switch name.String() {
		case "language":
			v, err := dec.ReadToken()
			if err != nil {
				return h, err
			}
			if v.Kind() == '"' {
				h.Language = v.String()
			}
			sawLanguage = true
		case "keywords":
			if h.Keywords, err = readKeywordTerms(dec); err != nil {
				return h, err
			}
			sawKeywords = true
		default:
			if err := dec.SkipValue(); err != nil {
				return h, err
			}
		}
	}
	return h, nil
}

// readKeywordTerms reads a keywords array's first segmentKeywords terms
// and skips the rest of it.
func readKeywordTerms(dec *jsontext.Decoder) ([]string, error) {
	if dec.PeekKind() != '[' {
		return nil, dec.SkipValue() // null: no keywords
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	var terms []string
	for dec.PeekKind() != ']' {
		if len(terms) == segmentKeywords || dec.PeekKind() != '{' {
			if err := dec.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		term := ""
		for dec.PeekKind() == '"' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			if name.String() != "term" {
				if err := dec.SkipValue(); err != nil {
					return nil, err
				}
				continue
			}
			v, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			if v.Kind() == '"' {
				term = v.String()
			}
		}
		if _, err := dec.ReadToken(); err != nil { // the keyword's '}'
			return nil, err
		}
		terms = append(terms, term)
	}
	_, err := dec.ReadToken() // ']'
	return terms, err
}

// analysisSummary is what a segment item keeps of its analysis: the
// language and the first few keywords.
func analysisSummary(res analyze.SegmentResult) (string, []string) {
	return res.Language, firstKeywords(res.Keywords, func(k analyze.Keyword) string { return k.Term })
}

// firstKeywords is the terms of the first segmentKeywords of ks.
func firstKeywords[K any](ks []K, term func(K) string) []string {
	keywords := []string{}
	for _, k := range ks[:min(segmentKeywords, len(ks))] {
		keywords = append(keywords, term(k))
	}
	return keywords
}

// analyzeOne analyses one segment's text; a panic in the analysis fails
// that segment alone.
func analyzeOne(_ context.Context, c segmentCall) (a segmentAnswer, err error) {
	defer func() {
		if r := recover(); r != nil {
			a = segmentAnswer{line: stageLine{Index: c.Index, Error: fmt.Sprintf("analysis failed: %v", r)}}
		}
	}()
	res := analyze.AnalyzeSegment(c.Text, analyze.Options{})
	out, err := json.Marshal(res)
	if err != nil {
		return segmentAnswer{line: stageLine{Index: c.Index, Error: fmt.Sprintf("analysis failed: %v", err)}}, nil
	}
	a = segmentAnswer{line: stageLine{Index: c.Index, Output: out}}
	a.language, a.keywords = analysisSummary(res)
	return a, nil
}

// analysisStore keeps the analyzer's results of a batch as one JSON
// array of BatchEntry (pipeline.BatchAnalysisBlobKey), the layout the
// graph, the summary and the dashboard read.
type analysisStore struct{}

// rawEntry is a stageoutput.BatchEntry whose result stays encoded.
type rawEntry struct {
	Index  int                    `json:"index"`
	Status pipeline.SegmentStatus `json:"status"`
	Error  string                 `json:"error,omitempty"`
	Result json.RawMessage        `json:"result,omitempty"`
}

func (analysisStore) key(ref pipeline.WorkflowRef, _ string, batch int) string {
	return pipeline.BatchAnalysisBlobKey(ref, batch)
}

// load reads the entries the analyzer answered; entries for segments it
// did not run (kept by earlier versions) are left out.
func (analysisStore) load(ctx context.Context, h *handlers, key string) (map[int]stageLine, error) {
	raw, found, err := h.getOptional(ctx, key)
	if err != nil || !found {
		return nil, err
	}
	list, err := stageoutput.DecodeAnalysis[jsontext.Value](key, raw)
	if err != nil {
		return nil, err
	}
	lines := make(map[int]stageLine, len(list))
	for _, e := range list {
		switch {
		case e.Status == pipeline.SegmentDone && e.Result != nil && len(*e.Result) > 0:
			lines[e.Index] = stageLine{Index: e.Index, Output: json.RawMessage(*e.Result)}
		case e.Status == pipeline.SegmentFailed:
			lines[e.Index] = stageLine{Index: e.Index, Error: e.Error}
		}
	}
	return lines, nil
}

func (analysisStore) save(ctx context.Context, h *handlers, key string, lines []stageLine) error {
	entries := make([]rawEntry, len(lines))
	for i, l := range lines {
		entries[i] = rawEntry{Index: l.Index, Status: pipeline.SegmentDone, Result: l.Output}
		if l.Error != "" {
			entries[i] = rawEntry{Index: l.Index, Status: pipeline.SegmentFailed, Error: l.Error}
		}
	}
	if err := blob.PutBytes(ctx, h.Blobs, key, encodeEntries(entries)); err != nil {
		return storageErr("write "+key, err)
	}
	return nil
}

// encodeEntries is json.Marshal(entries), byte for byte, without
// checking and compacting each result again: every result is an
// analysis json.Marshal wrote, now or for the blob it was read back from,
// so it is valid, compact and escaped already. On a backfill of a big
// document, where every result comes from the cache, the check was most
// of the stage's own work.
func encodeEntries(entries []rawEntry) []byte {
	size := 2
	for _, e := range entries {
		size += len(e.Result) + len(e.Error) + 48
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(e.Index), 10)
		b = append(b, `,"status":`...)
		b = appendJSONString(b, string(e.Status))
		if e.Error != "" {
			b = append(b, `,"error":`...)
			b = appendJSONString(b, e.Error)
		}
		if len(e.Result) > 0 {
			b = append(b, `,"result":`...)
			b = append(b, e.Result...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSONString appends s as encoding/json writes a string.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

func isTooBig(err error) bool {
	var tl *blob.TooLargeError
	return errors.As(err, &tl)
}
