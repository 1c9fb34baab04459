package analyze

import (
	"cmp"
	"container/heap"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SummaryOptions bound a document summary. Zero fields take the defaults.
type SummaryOptions struct {
	MaxKeywords        int // top keywords (default 20)
	MaxEntitiesPerType int // top entities of each type (default 10)
	MaxSentences       int // summary sentences (default 5, at most 50)
	MaxChars           int // bound on the summary's total length in characters (default 1,200)
}

// Summary defaults.
const (
	DefaultDocKeywords  = 20
	DefaultDocEntities  = 10
	DefaultDocSentences = 5
	DefaultDocChars     = 1_200
	candidatesPerPick   = 8 // sentences kept per summary slot until the end
)

func (o SummaryOptions) withDefaults() SummaryOptions {
	o.MaxKeywords = clampDefault(o.MaxKeywords, DefaultDocKeywords, 1_000)
	o.MaxEntitiesPerType = clampDefault(o.MaxEntitiesPerType, DefaultDocEntities, 1_000)
	o.MaxSentences = clampDefault(o.MaxSentences, DefaultDocSentences, 50)
	o.MaxChars = clampDefault(o.MaxChars, DefaultDocChars, 50_000)
	return o
}

// DocumentSummary summarises a document from its segment results.
type DocumentSummary struct {
	Language    string                   `json:"language"`            // majority language of the segments
	Languages   map[string]int           `json:"languages,omitempty"` // segments per language
	TopKeywords []Keyword                `json:"top_keywords"`
	TopEntities map[string][]EntityCount `json:"top_entities"` // by entity type
	Summary     []DocumentSentence       `json:"summary"`      // in document order
	Segments    int                      `json:"segments"`
	Words       int                      `json:"words"`
	Chars       int                      `json:"chars"`
	Sentences   int                      `json:"sentences"`
}

// EntityCount is an entity value with its total count and the number of
// segments it appears in.
type EntityCount struct {
	Value    string `json:"value"`
	Count    int    `json:"count"`
	Segments int    `json:"segments"`
}

// DocumentSentence is a summary sentence and the segment it comes from.
type DocumentSentence struct {
	Segment int     `json:"segment"`
	Text    string  `json:"text"`
	Score   float64 `json:"score"`
}

type tally struct {
	count int
	segs  int
}

// candidate is a segment summary sentence competing for the document
// summary; ord is its position within the segment summary.
type candidate struct {
	seg, ord int
	text     string
	score    float64
}

// worse orders candidates: lower score first, later position first.
func (a candidate) worse(b candidate) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	if a.seg != b.seg {
		return a.seg > b.seg
	}
	return a.ord > b.ord
}

type candHeap []candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return h[i].worse(h[j]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type langTally struct {
	segs, words int
}

// SummaryBuilder accumulates segment results one at a time. It keeps
// counts per distinct keyword and entity and a bounded pool of candidate
// sentences; the result does not depend on the order segments are added.
// A SummaryBuilder is not safe for concurrent use.
type SummaryBuilder struct {
	opts     SummaryOptions
	langs    map[string]*langTally
	keywords map[string]*tally
	entities map[string]map[string]*tally
	pool     candHeap
	seen     map[int]struct{}
	segs     int
	words    int
	chars    int
	sents    int
}

// NewSummaryBuilder returns an empty builder.
func NewSummaryBuilder(opts SummaryOptions) *SummaryBuilder {
	return &SummaryBuilder{
		opts:     opts.withDefaults(),
		langs:    map[string]*langTally{},
		keywords: map[string]*tally{},
		entities: map[string]map[string]*tally{},
		seen:     map[int]struct{}{},
	}
}

// Add records one segment's result. A segment index added twice counts once.
func (b *SummaryBuilder) Add(index int, r SegmentResult) {
	if _, dup := b.seen[index]; dup {
		return
	}
	b.seen[index] = struct{}{}
	b.segs++
	b.words += r.Words
	b.chars += r.Chars
	b.sents += r.Sentences
	if r.Language != "" {
		lt := b.langs[r.Language]
		if lt == nil {
			lt = &langTally{}
			b.langs[strings.Clone(r.Language)] = lt
		}
		lt.segs++
		lt.words += r.Words
	}
	for _, kw := range r.Keywords {
		if kw.Count > 0 && kw.Term != "" {
			addTally(b.keywords, kw.Term, kw.Count)
		}
	}
	for _, e := range r.Entities {
		if e.Count <= 0 || e.Value == "" || e.Type == "" {
			continue
		}
		m := b.entities[e.Type]
		if m == nil {
			m = map[string]*tally{}
			b.entities[strings.Clone(e.Type)] = m
		}
		addTally(m, e.Value, e.Count)
	}
	limit := b.opts.MaxSentences * candidatesPerPick
	for ord, s := range r.Summary {
		if s.Text == "" {
			continue
		}
		c := candidate{seg: index, ord: ord, text: s.Text, score: s.Score}
		if len(b.pool) < limit {
			c.text = strings.Clone(c.text)
			heap.Push(&b.pool, c)
		} else if b.pool[0].worse(c) {
			c.text = strings.Clone(c.text)
			b.pool[0] = c
			heap.Fix(&b.pool, 0)
		}
	}
}

func addTally(m map[string]*tally, key string, count int) {
	t := m[key]
	if t == nil {
		t = &tally{}
		m[strings.Clone(key)] = t
	}
	t.count += count
	t.segs++
}

// topTallies ranks by count, then segments, then value.
func topTallies(m map[string]*tally, k int) []EntityCount {
	out := make([]EntityCount, 0, len(m))
	for v, t := range m {
		out = append(out, EntityCount{Value: v, Count: t.count, Segments: t.segs})
	}
	slices.SortFunc(out, func(a, b EntityCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Segments, a.Segments); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	return slices.Clip(out[:min(len(out), k)])
}

// Summary returns the document summary of everything added so far.
func (b *SummaryBuilder) Summary() DocumentSummary {
	d := DocumentSummary{
		Language:    Undetermined,
		Languages:   map[string]int{},
		TopKeywords: []Keyword{},
		TopEntities: map[string][]EntityCount{},
		Summary:     []DocumentSentence{},
		Segments:    b.segs, Words: b.words, Chars: b.chars, Sentences: b.sents,
	}
	best := langTally{}
	for l, t := range b.langs {
		d.Languages[l] = t.segs
		if l == Undetermined {
			continue
		}
		if t.segs > best.segs || t.segs == best.segs && (t.words > best.words || t.words == best.words && l < d.Language) {
			best, d.Language = *t, l
		}
	}
	for _, kc := range topTallies(b.keywords, b.opts.MaxKeywords) {
		d.TopKeywords = append(d.TopKeywords, Keyword{Term: kc.Value, Count: kc.Count})
	}
	for typ, m := range b.entities {
		d.TopEntities[typ] = topTallies(m, b.opts.MaxEntitiesPerType)
	}
	d.Summary = b.pickSentences(d.TopKeywords)
	return d
}

// pickSentences re-ranks the candidate pool by the document's top keywords
// each sentence mentions (weighted by their document counts), then keeps
// the best within the length budget, in document order.
func (b *SummaryBuilder) pickSentences(top []Keyword) []DocumentSentence {
	docWeight := make(map[string]float64, len(top))
	for _, kw := range top {
		docWeight[kw.Term] = float64(kw.Count) / float64(top[0].Count)
	}
	cands := slices.Clone(b.pool)
	seen := map[string]bool{}
	for i := range cands {
		clear(seen)
		boost := 0.0
		for _, w := range strings.FieldsFunc(strings.ToLower(cands[i].text), func(r rune) bool {
			return !unicode.IsLetter(r) && r != '-' && r != '\''
		}) {
			if !seen[w] {
				seen[w] = true
				boost += docWeight[w]
			}
		}
		cands[i].score = roundScore(cands[i].score * (1 + min(boost, 3)))
	}
	slices.SortFunc(cands, func(x, y candidate) int {
		switch {
		case y.worse(x):
			return -1
		case x.worse(y):
			return 1
		}
		return 0
	})
	var picked []candidate
	used := map[string]bool{}
	budget := b.opts.MaxChars
	for _, c := range cands {
		if len(picked) == b.opts.MaxSentences || budget <= 0 {
			break
		}
		norm := strings.ToLower(c.text)
		l := utf8.RuneCountInString(c.text)
		if used[norm] || l > budget {
			continue
		}
		used[norm] = true
		budget -= l + 1
		picked = append(picked, c)
	}
	slices.SortFunc(picked, func(x, y candidate) int {
		if c := cmp.Compare(x.seg, y.seg); c != 0 {
			return c
		}
		return cmp.Compare(x.ord, y.ord)
	})
	out := make([]DocumentSentence, len(picked))
	for i, c := range picked {
		out[i] = DocumentSentence{Segment: c.seg, Text: c.text, Score: c.score}
	}
	return out
}

func roundScore(v float64) float64 {
	return float64(int64(v*summaryScoreScale+0.5)) / summaryScoreScale
}
