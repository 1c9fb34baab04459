package search

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/docpipe/docpipe/pipeline/docread"
	"github.com/docpipe/docpipe/pipeline/extract"
)

// A segment's digest changes with anything its row is made of, and with
// nothing else.
func TestSegmentDigestFollowsWhatTheRowIsMadeOf(t *testing.T) {
	base := func() docread.Segment {
		return docread.Segment{Index: 3, Kind: "page", Text: "the plums", Outputs: map[string]json.RawMessage{
			docread.AnalysisOutput: json.RawMessage(`{"keywords":[{"term":"plums"}]}`),
			"tag":                  json.RawMessage(`{"label":"fruit"}`),
		}}
	}
	want := SegmentDigest(base())
	same := base()
	same.Index = 9 // the row's place is its key, not its content
	if !bytes.Equal(SegmentDigest(same), want) {
		t.Error("the same content at another place digests differently")
	}
	for name, change := range map[string]func(*docread.Segment){
		"text":         func(s *docread.Segment) { s.Text = "the plum" },
		"kind":         func(s *docread.Segment) { s.Kind = "section" },
		"audio":        func(s *docread.Segment) { s.Audio = &extract.Span{StartMS: 0, EndMS: 10} },
		"output value": func(s *docread.Segment) { s.Outputs["tag"] = json.RawMessage(`{"label":"fruits"}`) },
		"output name":  func(s *docread.Segment) { s.Outputs["tags"] = s.Outputs["tag"]; delete(s.Outputs, "tag") },
		"no outputs":   func(s *docread.Segment) { s.Outputs = nil },
		"text moved into an output": func(s *docread.Segment) {
			s.Text = ""
			s.Outputs["tag"] = json.RawMessage(`"the plums"`)
		},
	} {
		s := base()
		change(&s)
		if bytes.Equal(SegmentDigest(s), want) {
			t.Errorf("changing the %s leaves the digest as it was", name)
		}
	}
	if bytes.Equal(DocumentDigest(base().Outputs), SegmentDigest(docread.Segment{Outputs: base().Outputs})) {
		t.Error("a document row and a segment row of the same outputs digest alike")
	}
}
