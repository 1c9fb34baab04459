package eval

import (
	"encoding/json"
	"strings"
	"testing"
)

const sampleSummary = `{"language": "en",
 "top_keywords": [{"term": "chairs", "count": 2}, {"term": "office", "count": 1}, {"term": "vat", "count": 1}],
 "top_entities": {"email": [{"value": "anna@x.example"}], "name": [{"value": "Anna Brändli"}, {"value": "Zürich"}]},
 "summary": [{"segment": 1, "text": "We confirm delivery."}, {"segment": 1, "text": "Payable in 30 days."}]}`

func sampleOutputs() Outputs {
	return Outputs{
		Summary: json.RawMessage(sampleSummary),
		Stages: map[string]StageOutput{
			"facts":  {Document: json.RawMessage(`{"total": 9840, "currency": "CHF", "lines": [{"item": "chair"}]}`)},
			"redact": {Segments: []json.RawMessage{json.RawMessage(`{"redacted": {"email": 1}}`), json.RawMessage(`{}`), json.RawMessage(`{"redacted": {"email": 2}}`)}},
		},
		Pages: []string{"Dear Mr. Oyelaran,\nThank you", "Kind regards, Jürg"},
	}
}

func TestOutputsValue(t *testing.T) {
	t.Parallel()
	o := sampleOutputs()
	cases := map[string]string{
		"summary":               `"We confirm delivery. Payable in 30 days."`,
		"language":              `"en"`,
		"keywords":              `["chairs","office","vat"]`,
		"entities.email":        `["anna@x.example"]`,
		"facts.total":           `9840`,
		"facts.lines.0.item":    `"chair"`,
		"facts":                 `{"currency":"CHF","lines":[{"item":"chair"}],"total":9840}`,
		"redact.redacted.email": `[1,2]`, // the segments that have the field
	}
	for path, want := range cases {
		v, err := o.Value(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		got, _ := json.Marshal(v)
		if string(got) != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	ents, _ := o.Value("entities")
	if len(ents.([]any)) != 3 {
		t.Errorf("entities = %v, want all three values", ents)
	}
	for path, says := range map[string]string{
		"doctype.type":   "no output of a stage doctype",
		"facts.vat":      "facts has no field vat",
		"facts.lines.3":  "facts.lines has no element 3",
		"facts.total.x":  "facts.total is not an object",
		"keywords.first": "keywords has no fields",
	} {
		if _, err := o.Value(path); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: got %v, want %q", path, err, says)
		}
	}
	if _, err := (Outputs{}).Value("summary"); err == nil {
		t.Error("no summary: want an error")
	}
}

func TestScoreWeightsFieldsAndPages(t *testing.T) {
	t.Parallel()
	tr, err := Parse("t.json", []byte(`{"document": "a.txt",
	 "fields": {
	   "language": {"expect": "en", "compare": "exact", "weight": 2},
	   "facts.total": {"expect": 9000, "tolerance": 1},
	   "keywords": {"expect": ["chairs", "delivery"], "metric": "recall"},
	   "doctype.type": {"expect": "letter"}
	 },
	 "pages": {"1": ["dear mr oyelaran", "Thank"], "2": ["Oyelaran"], "*": ["regards"]},
	 "pages_weight": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	d := Score(tr, sampleOutputs())
	scores := map[string]FieldScore{}
	for _, f := range d.Fields {
		scores[f.Path] = f
	}
	if scores["language"].Score != 1 || scores["facts.total"].Score != 0 || scores["keywords"].Score != 0.5 || scores["doctype.type"].Score != 0 {
		t.Errorf("field scores %+v", d.Fields)
	}
	if m := scores["doctype.type"].Missing; !strings.Contains(m, "doctype") {
		t.Errorf("missing field says %q", m)
	}
	if kl := scores["keywords"].List; kl == nil || kl.Matched != 1 || kl.Got != 3 {
		t.Errorf("keywords list %+v", kl)
	}
	// Page 2 does not hold "Oyelaran"; the rest is found: 3 of 4.
	if d.PagesScore == nil || *d.PagesScore != 0.75 {
		t.Fatalf("pages score %v, pages %+v", d.PagesScore, d.Pages)
	}
	if d.Pages[1].Page != "2" || len(d.Pages[1].Missing) != 1 || d.Pages[2].Page != "*" {
		t.Errorf("pages %+v", d.Pages)
	}
	want := (1*2 + 0 + 0.5 + 0 + 0.75*3) / (2 + 1 + 1 + 1 + 3)
	if !near(d.Score, want) {
		t.Errorf("score %v, want %v", d.Score, want)
	}
}

func TestScoreSnippetsAreWholeWords(t *testing.T) {
	t.Parallel()
	tr, _ := Parse("t.json", []byte(`{"document": "a", "pages": {"1": ["2024"], "5": ["x"]}}`))
	d := Score(tr, Outputs{Pages: []string{"order 20245"}})
	if *d.PagesScore != 0 {
		t.Errorf("got %+v: 2024 is not in 20245, and there is no page 5", d.Pages)
	}
}

func TestSummarise(t *testing.T) {
	t.Parallel()
	half := 0.5
	docs := []DocScore{
		{Score: 1, Fields: []FieldScore{{Path: "language", Score: 1}, {Path: "keywords", Score: 1}}},
		{Score: 0.5, Fields: []FieldScore{{Path: "language", Score: 0}}, PagesScore: &half},
	}
	s := Summarise(docs)
	if s.Score != 0.75 || s.Fields["language"] != 0.5 || s.Fields["keywords"] != 1 || s.Pages == nil || *s.Pages != 0.5 {
		t.Errorf("got %+v", s)
	}
}
