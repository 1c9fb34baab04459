package search

import (
	"encoding/json"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/docread"
	"github.com/docpipe/docpipe/pipeline/extract"
)

func TestSegmentEntryFields(t *testing.T) {
	wf := pipeline.Workflow{ID: "W"}
	seg := docread.Segment{Index: 4, Kind: "span", Audio: &extract.Span{StartMS: 1000, EndMS: 5000}, Text: "the text", Outputs: map[string]json.RawMessage{
		docread.AnalysisOutput: json.RawMessage(`{"language":"en","keywords":[{"term":"budget","count":2}],"entities":[{"type":"date","value":"2024-09-12","count":1}],"summary":[{"text":"One.","score":1},{"text":"Two.","score":0.5}]}`),
		"redact":               json.RawMessage(`{"text":"[EMAIL] wrote","redacted":{"email":1}}`),
		"labels":               json.RawMessage(`["urgent", {"owner": "Ana"}, 3]`),
	}}
	e := SegmentEntry(wf, seg)
	if e.Segment != 4 || e.Kind != "span" || e.AudioStartMS != 1000 || e.AudioEndMS != 5000 || e.Body != "the text" {
		t.Errorf("entry %+v", e)
	}
	if e.Keywords != "budget" || e.Entities != "2024-09-12" || e.Summary != "One. Two." {
		t.Errorf("analysis fields: %q %q %q", e.Keywords, e.Entities, e.Summary)
	}
	if e.Outputs != "urgent\nAna\n[EMAIL] wrote" {
		t.Errorf("outputs %q: users' stages' strings, stages by name", e.Outputs)
	}
}

func TestDocumentEntryReadsTheSummary(t *testing.T) {
	e := DocumentEntry(pipeline.Workflow{ID: "W"}, map[string]json.RawMessage{
		docread.SummaryOutput: json.RawMessage(`{"top_keywords":[{"term":"park"}],"top_entities":{"name":[{"value":"Rebecca Stein"}],"date":[{"value":"2025-03-03"}]},"summary":[{"text":"Council approves."}]}`),
		"classify":            json.RawMessage(`{"category":"news"}`),
	})
	if e.Segment != DocumentSegment || e.Kind != "document" || e.AudioStartMS != -1 {
		t.Errorf("entry %+v", e)
	}
	if e.Keywords != "park" || e.Entities != "2025-03-03 Rebecca Stein" || e.Summary != "Council approves." || e.Outputs != "news" {
		t.Errorf("fields %+v", e.Fields)
	}
}

func TestHitWhere(t *testing.T) {
	start, end := int64(12_000), int64(3_725_000)
	for h, want := range map[*Hit]string{
		{Segment: 0, Kind: "document"}:                                     "document",
		{Segment: 3, Kind: "page"}:                                         "page 3",
		{Segment: 2, Kind: "span", AudioStartMS: &start, AudioEndMS: &end}: "span 2 (0:12-1:02:05)",
	} {
		if got := h.Where(); got != want {
			t.Errorf("Where() = %q, want %q", got, want)
		}
	}
}
