// Package search is what docpipe's full-text search finds and returns,
// apart from any index: the searchable fields of a segment and of a
// document, the query, the hits and the errors a query may meet. The
// local index (SQLite FTS5 in the state file) is a driver,
// pipeline/driver/sqlitesearch; on AWS there is none, and `docpipe
// export` to S3 feeds a search service instead.
package search

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/docread"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// DocumentSegment is the segment number of a document's own row: its
// summary and its document stages' outputs.
const DocumentSegment = 0

// Fields are the searchable texts of one row of the index: a segment, or
// a document's own outputs (segment DocumentSegment).
type Fields struct {
	Body     string // the segment's text
	Keywords string // the analyzer's keywords
	Entities string // the analyzer's entities (dates, amounts, names, ...)
	Summary  string // the analyzer's summary sentences, or the document summary
	Outputs  string // every string users' stages answered, one per line
}

// Entry is one row of the index: where it comes from and what it holds.
type Entry struct {
	Workflow pipeline.Workflow
	Segment  int    // 1-based, or DocumentSegment
	Kind     string // "page", "section", "span" or "document"
	// AudioStartMS and AudioEndMS are the stretch of sound a "span"
	// covers; -1 otherwise.
	AudioStartMS, AudioEndMS int64
	Fields
}

// SegmentEntry is the index row of one segment of wf.
func SegmentEntry(wf pipeline.Workflow, s docread.Segment) Entry {
	e := Entry{Workflow: wf, Segment: s.Index, Kind: s.Kind, AudioStartMS: -1, AudioEndMS: -1}
	if s.Audio != nil {
		e.AudioStartMS, e.AudioEndMS = s.Audio.StartMS, s.Audio.EndMS
	}
	e.Body = s.Text
	e.addOutputs(s.Outputs, docread.AnalysisOutput)
	return e
}

// DocumentEntry is the index row of wf's document outputs: the built-in
// summary and users' document stages.
func DocumentEntry(wf pipeline.Workflow, outputs map[string]json.RawMessage) Entry {
	e := Entry{Workflow: wf, Segment: DocumentSegment, Kind: "document", AudioStartMS: -1, AudioEndMS: -1}
	e.addOutputs(outputs, docread.SummaryOutput)
	return e
}

// entryCode is part of every row digest: bump it when what SegmentEntry
// or DocumentEntry make of the same inputs changes, so that the index
// rebuilds the rows it would otherwise keep.
const entryCode = "search-entry/1"

// SegmentDigest hashes what SegmentEntry makes a row of: the segment's
// audio span, text and outputs as its stages answered them. Two segments
// with one digest make the same row whatever their workflows, so a
// document's next workflow keeps the rows whose digest is unchanged
// without building them again.
func SegmentDigest(s docread.Segment) []byte {
	d := newDigest("segment")
	var start, end int64 = -1, -1
	if s.Audio != nil {
		start, end = s.Audio.StartMS, s.Audio.EndMS
	}
	d.add([]byte(s.Kind)).add([]byte(strconv.FormatInt(start, 10))).add([]byte(strconv.FormatInt(end, 10))).add([]byte(s.Text))
	return d.outputs(s.Outputs).sum()
}

// DocumentDigest is SegmentDigest for a document's own row.
func DocumentDigest(outputs map[string]json.RawMessage) []byte {
	return newDigest("document").outputs(outputs).sum()
}

// digest is a SHA-256 of framed parts: each is preceded by its length,
// so no two lists of parts hash alike by running into each other.
type digest struct{ h hash.Hash }

func newDigest(row string) digest {
	d := digest{sha256.New()}
	return d.add([]byte(entryCode)).add([]byte(row))
}

func (d digest) add(part []byte) digest {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(part)))
	d.h.Write(n[:])
	d.h.Write(part)
	return d
}

func (d digest) outputs(outputs map[string]json.RawMessage) digest {
	for _, name := range slices.Sorted(maps.Keys(outputs)) {
		d.add([]byte(name)).add(outputs[name])
	}
	return d
}

func (d digest) sum() []byte { return d.h.Sum(nil) }

// analysis is what the built-in analyzer's segment result and document
// summary have in common, as far as search reads them.
type analysis struct {
	Keywords    []term             `json:"keywords"`
	TopKeywords []term             `json:"top_keywords"`
	Entities    []value            `json:"entities"`
	TopEntities map[string][]value `json:"top_entities"` // by type
	Summary     []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

type term struct {
	Term string `json:"term"`
}

type value struct {
	Value string `json:"value"`
}

// addOutputs fills the fields from outputs: builtin's as the analyzer's
// keywords, entities and summary, every other stage's strings as Outputs.
func (e *Entry) addOutputs(outputs map[string]json.RawMessage, builtin string) {
	var other []string
	for _, name := range slices.Sorted(maps.Keys(outputs)) {
		raw := outputs[name]
		if name != builtin {
			other = appendStrings(other, raw)
			continue
		}
		a, err := stageoutput.DecodeResult[analysis](raw)
		if err != nil {
			other = appendStrings(other, raw)
			continue
		}
		var kw, ent []string
		for _, k := range append(a.Keywords, a.TopKeywords...) {
			kw = append(kw, k.Term)
		}
		for _, en := range a.Entities {
			ent = append(ent, en.Value)
		}
		for _, typ := range slices.Sorted(maps.Keys(a.TopEntities)) {
			for _, en := range a.TopEntities[typ] {
				ent = append(ent, en.Value)
			}
		}
		e.Keywords = strings.Join(kw, " ")
		e.Entities = strings.Join(ent, " ")
		sentences := make([]string, len(a.Summary))
		for i, st := range a.Summary {
			sentences[i] = st.Text
		}
		e.Summary = strings.Join(sentences, " ")
	}
	e.Outputs = strings.Join(other, "\n")
}

// appendStrings appends every string value in the JSON raw (at any
// depth; object keys are not text someone searches for) to out.
func appendStrings(out []string, raw json.RawMessage) []string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return out
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if s := strings.TrimSpace(x); s != "" {
				out = append(out, s)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		}
	}
	walk(v)
	return out
}

// Query is one search.
type Query struct {
	Text     string // in the index's query syntax (FTS5: phrases, prefixes, AND/OR/NOT)
	Project  string // "" for every project
	Pipeline string // "" for every pipeline
	Limit    int    // at most this many hits; 0 means DefaultLimit
}

// DefaultLimit is how many hits a query returns unless told.
const DefaultLimit = 20

// Results is what a query found.
type Results struct {
	Hits []Hit // best first
	// Ranked is how many matches were ranked. Capped says more matched
	// than the index ranks at once: the hits are the best of the Ranked
	// most recently indexed matches, and a narrower query (more words, a
	// project, a pipeline) ranks all of its matches.
	Ranked int
	Capped bool
}

// Hit is one matching row, best first.
type Hit struct {
	ProjectID       string  `json:"project_id"`
	DocumentID      string  `json:"document_id"`
	WorkflowID      string  `json:"workflow_id"`
	FileName        string  `json:"file_name"`
	Pipeline        string  `json:"pipeline"`
	PipelineVersion int     `json:"pipeline_version"`
	Segment         int     `json:"segment"` // 0: the document's own outputs
	Kind            string  `json:"kind"`
	AudioStartMS    *int64  `json:"audio_start_ms,omitempty"`
	AudioEndMS      *int64  `json:"audio_end_ms,omitempty"`
	Field           string  `json:"field"`   // where the snippet comes from: body, keywords, entities, summary, outputs
	Snippet         string  `json:"snippet"` // matches between SnippetOpen and SnippetClose
	Score           float64 `json:"score"`   // bm25: lower is better
}

// Snippet markers around matched terms.
const (
	SnippetOpen  = "**"
	SnippetClose = "**"
)

// Where says which part of the document a hit is: "page 3", "section
// 2", "span 4 (0:12-0:31)" or "document".
func (h Hit) Where() string {
	if h.Segment == DocumentSegment {
		return "document"
	}
	s := fmt.Sprintf("%s %d", h.Kind, h.Segment)
	if h.AudioStartMS != nil && h.AudioEndMS != nil {
		s += fmt.Sprintf(" (%s-%s)", clock(*h.AudioStartMS), clock(*h.AudioEndMS))
	}
	return s
}

func clock(ms int64) string {
	s := ms / 1000
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// BadQueryError is a query the index cannot parse.
type BadQueryError struct {
	Query  string
	Reason string
}

func (e *BadQueryError) Error() string {
	return fmt.Sprintf("cannot search for %q: %s; "+
		`a phrase is "two words", a prefix ends in * (contract*), and words combine with AND, OR, NOT and parentheses`, e.Query, e.Reason)
}

// ErrNoIndex is a state with no search index: on AWS.
var ErrNoIndex = errors.New("no search index")
