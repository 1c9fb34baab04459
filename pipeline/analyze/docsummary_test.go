package analyze

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf8"
)

func TestSummaryBuilder(t *testing.T) {
	t.Parallel()
	pages := []string{
		`Acme Logistics GmbH reports strong freight growth. Freight volumes rose in Rotterdam, and freight revenue
reached EUR 4,250,000. Maria Schneider leads freight operations.`,
		`Le transport de fret a augmenté au premier trimestre. La société a signé un contrat avec la Banque de France le 5 mars 2024.`,
		`Freight customers renewed their contracts. Globex Corporation signed on 5 March 2024 and pays $1,234.56 per week
for freight routes. Maria Schneider negotiated the freight terms.`,
		`The canteen menu changed. Parking is free on weekends. The lobby was painted.`,
	}
	b := NewSummaryBuilder(SummaryOptions{MaxSentences: 3})
	var words, chars int
	for i, p := range pages {
		r := AnalyzeSegment(p, Options{})
		words += r.Words
		chars += r.Chars
		b.Add(i+1, r)
	}
	d := b.Summary()
	if d.Language != "en" || d.Languages["en"] != 3 || d.Languages["fr"] != 1 {
		t.Errorf("language %q %v", d.Language, d.Languages)
	}
	if d.Segments != 4 || d.Words != words || d.Chars != chars {
		t.Errorf("counts %+v", d)
	}
	if len(d.TopKeywords) == 0 || d.TopKeywords[0].Term != "freight" || d.TopKeywords[0].Count != 7 {
		t.Errorf("top keywords %+v", d.TopKeywords)
	}
	names := d.TopEntities["name"]
	if len(names) == 0 || names[0] != (EntityCount{Value: "Maria Schneider", Count: 2, Segments: 2}) {
		t.Errorf("names %+v", names)
	}
	if dates := d.TopEntities["date"]; len(dates) != 1 || dates[0] != (EntityCount{Value: "2024-03-05", Count: 2, Segments: 2}) {
		t.Errorf("dates %+v", dates)
	}
	if len(d.Summary) != 3 {
		t.Fatalf("summary %+v", d.Summary)
	}
	for i, s := range d.Summary {
		if s.Segment == 4 {
			t.Errorf("off-topic segment in summary: %q", s.Text)
		}
		if i > 0 && d.Summary[i-1].Segment > s.Segment {
			t.Errorf("summary not in document order: %+v", d.Summary)
		}
	}
}

func TestSummaryBuilderBoundsOrderAndDuplicates(t *testing.T) {
	t.Parallel()
	segs := synthSegments(3_000, 5)
	opts := SummaryOptions{MaxSentences: 4, MaxChars: 100, MaxKeywords: 7, MaxEntitiesPerType: 3}
	b := NewSummaryBuilder(opts)
	for _, s := range segs {
		b.Add(s.Index, s.Result)
	}
	want := b.Summary()
	if len(want.TopKeywords) != 7 || len(want.Summary) == 0 || len(want.Summary) > 4 {
		t.Fatalf("summary %+v", want)
	}
	total := 0
	for i, s := range want.Summary {
		total += utf8.RuneCountInString(s.Text) + 1
		if i > 0 && want.Summary[i-1].Segment >= s.Segment {
			t.Errorf("order %+v", want.Summary)
		}
	}
	if total-1 > 100 {
		t.Errorf("summary of %d chars", total-1)
	}
	for typ, es := range want.TopEntities {
		if len(es) != 3 {
			t.Errorf("%s: %d entities", typ, len(es))
		}
	}

	shuffled := slices.Clone(segs)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b2 := NewSummaryBuilder(opts)
	for _, s := range shuffled {
		b2.Add(s.Index, s.Result)
		b2.Add(s.Index, s.Result)
	}
	if mustJSON(t, b2.Summary()) != mustJSON(t, want) {
		t.Error("summary depends on the order or repetition of segments")
	}
}

func TestSummaryBuilderEmpty(t *testing.T) {
	t.Parallel()
	d := NewSummaryBuilder(SummaryOptions{}).Summary()
	if got := mustJSON(t, d); got != `{"language":"und","top_keywords":[],"top_entities":{},"summary":[],"segments":0,"words":0,"chars":0,"sentences":0}` {
		t.Errorf("empty summary %s", got)
	}
	b := NewSummaryBuilder(SummaryOptions{})
	b.Add(1, SegmentResult{Language: "und"})
	b.Add(2, SegmentResult{Language: "und", Summary: []Sentence{{Text: "", Score: 1}}})
	if d := b.Summary(); d.Language != "und" || len(d.Summary) != 0 {
		t.Errorf("undetermined document %+v", d)
	}
}

func BenchmarkSummary(b *testing.B) {
	segs := synthSegments(30_000, 1)
	b.ReportAllocs()
	for b.Loop() {
		sb := NewSummaryBuilder(SummaryOptions{})
		for _, s := range segs {
			sb.Add(s.Index, s.Result)
		}
		if len(sb.Summary().Summary) == 0 {
			b.Fatal("empty summary")
		}
	}
	b.ReportMetric(float64(len(segs))*float64(b.N)/b.Elapsed().Seconds(), "segments/s")
}
