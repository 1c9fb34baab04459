// Package analyze is docpipe's text analysis: language, keywords, entities
// and an extractive summary for one segment (AnalyzeSegment), and the
// streaming per-document aggregations built from segment results
// (GraphBuilder, SummaryBuilder). Everything here is pure: no I/O, no
// clocks, deterministic output for the same input.
package analyze

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Entity types.
const (
	EntityEmail  = "email"
	EntityURL    = "url"
	EntityDate   = "date"
	EntityAmount = "amount"
	EntityName   = "name"
)

// entityOrder ranks entity types for tie-breaks and grouping.
func entityOrder(t string) int {
	switch t {
	case EntityName:
		return 0
	case EntityDate:
		return 1
	case EntityAmount:
		return 2
	case EntityEmail:
		return 3
	case EntityURL:
		return 4
	}
	return 5
}

// DateOrder says how to read an all-numeric date such as 05/03/2024.
type DateOrder string

const (
	// DateOrderAuto reads day-first unless the text is English, where such
	// a date stays as written unless one field exceeds 12.
	DateOrderAuto DateOrder = ""
	DateOrderDMY  DateOrder = "dmy"
	DateOrderMDY  DateOrder = "mdy"
)

// Options tune AnalyzeSegment. Zero fields take the defaults.
type Options struct {
	MaxKeywords      int       // keywords kept (default 10, at most 100)
	MaxEntities      int       // entities kept per type (default 20, at most 200)
	SummarySentences int       // sentences in the summary (default 3, at most 10)
	SummaryChars     int       // bound on the summary's total length in characters (default 500)
	MaxBytes         int       // input beyond this many bytes is ignored (default 1 MiB)
	Language         string    // skip detection and use this ISO 639-1 code
	DateOrder        DateOrder // reading of all-numeric dates
}

// Default option values.
const (
	DefaultMaxKeywords      = 10
	DefaultMaxEntities      = 20
	DefaultSummarySentences = 3
	DefaultSummaryChars     = 500
	DefaultMaxBytes         = 1 << 20
)

func (o Options) withDefaults() Options {
	o.MaxKeywords = clampDefault(o.MaxKeywords, DefaultMaxKeywords, 100)
	o.MaxEntities = clampDefault(o.MaxEntities, DefaultMaxEntities, 200)
	o.SummarySentences = clampDefault(o.SummarySentences, DefaultSummarySentences, 10)
	o.SummaryChars = clampDefault(o.SummaryChars, DefaultSummaryChars, 10_000)
	o.MaxBytes = clampDefault(o.MaxBytes, DefaultMaxBytes, 64<<20)
	return o
}

func clampDefault(v, def, hi int) int {
	if v <= 0 {
		return def
	}
	return min(v, hi)
}

// SegmentResult is the analysis of one segment, stored as JSON.
type SegmentResult struct {
	Language  string     `json:"language"`
	Keywords  []Keyword  `json:"keywords"`
	Entities  []Entity   `json:"entities"`
	Summary   []Sentence `json:"summary"`
	Chars     int        `json:"chars"`
	Words     int        `json:"words"`
	Sentences int        `json:"sentences"`
	Truncated bool       `json:"truncated,omitempty"` // input was longer than Options.MaxBytes
}

// Keyword is a normalised (lower-case) term and how often it occurs.
type Keyword struct {
	Term  string `json:"term"`
	Count int    `json:"count"`
}

// Entity is a typed value found in the text. Dates are ISO 8601 where the
// text allows it (2024-03-05, or 2024-03 for a month), amounts are
// "<ISO 4217 code> <number>" with a dot as decimal separator, emails are
// lower-case.
type Entity struct {
	Type  string `json:"type"`
	Value string `json:"value"`
	Count int    `json:"count"`
}

// Sentence is one sentence of an extractive summary with its relevance
// score: the keyword weight it carries, comparable across segments.
type Sentence struct {
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

// SummaryText joins the summary sentences.
func (r SegmentResult) SummaryText() string {
	var b strings.Builder
	for i, s := range r.Summary {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.Text)
	}
	return b.String()
}

// AnalyzeSegment analyses one segment's text. It accepts any input (empty,
// binary, invalid UTF-8) and its work is bounded by Options.MaxBytes.
func AnalyzeSegment(text string, opts Options) SegmentResult {
	opts = opts.withDefaults()
	res := SegmentResult{Keywords: []Keyword{}, Entities: []Entity{}, Summary: []Sentence{}}
	if len(text) > opts.MaxBytes {
		cut := opts.MaxBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
		res.Truncated = true
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	// Compatibility composition folds ligatures and decomposed accents from
	// PDF text layers into the forms people type.
	if !norm.NFKC.IsNormalString(text) {
		text = norm.NFKC.String(text)
	}
	res.Chars = utf8.RuneCountInString(text)
	res.Words = countWords(text)

	s := getScanner()
	defer putScanner(s)
	s.scan(text)
	res.Sentences = len(s.sents)

	lang := langOf(opts.Language)
	if lang < 0 && opts.Language == "" {
		var sc langScores
		for _, t := range s.terms {
			sc.add(t.stop, t.feat, int(t.count))
		}
		lang = sc.best(len(s.toks))
	}
	switch {
	case lang >= 0:
		res.Language = languages[lang]
	case opts.Language != "":
		res.Language = opts.Language
	default:
		res.Language = Undetermined
	}

	s.names(lang)
	s.resolveDates(lang, opts.DateOrder)
	res.Entities = s.entityList(opts.MaxEntities)
	weights := s.keywords(lang, opts.MaxKeywords, &res)
	res.Summary = s.summarize(weights, opts.SummarySentences, opts.SummaryChars)
	return res
}

// countWords counts whitespace-separated fields that hold a letter or digit.
func countWords(text string) int {
	n, inField, counted := 0, false, false
	for i := 0; i < len(text); {
		var space, alnum bool
		if c := text[i]; c < utf8.RuneSelf {
			cls := asciiClass[c]
			space, alnum = cls == clsSpace, cls >= clsLetter
			i++
		} else {
			r, size := utf8.DecodeRuneInString(text[i:])
			space, alnum = unicode.IsSpace(r), isAlnum(r)
			i += size
		}
		if space {
			inField = false
			continue
		}
		if !inField {
			inField, counted = true, false
		}
		if !counted && alnum {
			counted = true
			n++
		}
	}
	return n
}

// keywords picks the top terms of the segment and returns each term's
// weight for sentence scoring, indexed by term id.
func (s *scanner) keywords(lang, max int, res *SegmentResult) []float64 {
	cands := s.idBuf[:0]
	maxCount := int32(0)
	for id := range s.terms {
		t := &s.terms[id]
		if t.count <= 0 || t.noKey || isStopword(t.stop, lang) {
			continue
		}
		cands = append(cands, int32(id))
		maxCount = max32(maxCount, t.count)
	}
	s.idBuf = cands
	weights := s.weightBuf[:0]
	for range s.terms {
		weights = append(weights, 0)
	}
	s.weightBuf = weights
	if maxCount == 0 {
		return weights
	}
	// Saturating term frequency (as in BM25) keeps sentence scores
	// comparable across segments: a page of words seen once scores low
	// however its counts compare with each other.
	for _, id := range cands {
		c := float64(s.terms[id].count)
		weights[id] = c / (c + 2)
	}
	cands = s.topTerms(cands, max)
	res.Keywords = make([]Keyword, len(cands))
	for i, id := range cands {
		res.Keywords[i] = Keyword{Term: strings.Clone(s.terms[id].key), Count: int(s.terms[id].count)}
	}
	return weights
}

// better orders terms by count, then alphabetically.
func (s *scanner) better(a, b int32) bool {
	ta, tb := &s.terms[a], &s.terms[b]
	if ta.count != tb.count {
		return ta.count > tb.count
	}
	return ta.key < tb.key
}

// topTerms keeps the k best of ids, best first, in place. Insertion into a
// short sorted prefix beats sorting the few hundred terms of a page.
func (s *scanner) topTerms(ids []int32, k int) []int32 {
	n := 0
	for _, id := range ids {
		if n == k && !s.better(id, ids[n-1]) {
			continue
		}
		if n < k {
			n++
		}
		j := n - 1
		for j > 0 && s.better(id, ids[j-1]) {
			ids[j] = ids[j-1]
			j--
		}
		ids[j] = id
	}
	return ids[:n]
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

// Sentence selection bounds.
const (
	minSummaryTokens  = 4
	maxSummaryTokens  = 80
	maxSentenceRunes  = 300
	summaryScoreScale = 1e4
)

// summarize picks the n best sentences by keyword weight, in text order,
// within a budget of maxChars characters.
func (s *scanner) summarize(weights []float64, n, maxChars int) []Sentence {
	type cand struct {
		idx   int
		score float64
	}
	var cands []cand
	for pass := 0; pass < 2 && len(cands) == 0; pass++ {
		for si, st := range s.sents {
			ntok := int(st.tokTo - st.tokFrom)
			if pass == 0 && (ntok < minSummaryTokens || ntok > maxSummaryTokens || st.letterToks*2 < int32(ntok)) {
				continue
			}
			if ntok == 0 || st.letterToks == 0 {
				continue
			}
			sum := 0.0
			for _, tk := range s.toks[st.tokFrom:st.tokTo] {
				if tk.term < 0 || s.terms[tk.term].lastSent == int32(si) {
					continue
				}
				s.terms[tk.term].lastSent = int32(si)
				sum += weights[tk.term]
			}
			score := math.Round(sum/math.Sqrt(float64(ntok))*summaryScoreScale) / summaryScoreScale
			cands = append(cands, cand{si, score})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	cands = cands[:min(len(cands), n)]
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(a.idx, b.idx) })
	out := make([]Sentence, 0, len(cands))
	budget := maxChars
	for _, c := range cands {
		st := s.sents[c.idx]
		txt := cleanSentence(s.text[st.start:st.end], min(maxSentenceRunes, budget))
		l := utf8.RuneCountInString(txt)
		if txt == "" || (l > budget && len(out) > 0) {
			continue
		}
		budget -= l + 1
		out = append(out, Sentence{Text: txt, Score: c.score})
		if budget <= 0 {
			break
		}
	}
	return out
}

// cleanSentence collapses white space and control characters to single
// spaces and cuts the text to at most max runes, at a word boundary when it
// has one, marking the cut with an ellipsis.
func cleanSentence(raw string, max int) string {
	if max < 2 {
		return ""
	}
	var b strings.Builder
	b.Grow(min(len(raw), 4*max))
	n, lastSpace := 0, -1
	pending, truncated := false, false
	for _, r := range raw {
		if isSpace(r) || r < 0x20 || r == 0x7f || r == utf8.RuneError || (r >= 0x80 && r < 0xa0) {
			pending = n > 0
			continue
		}
		k := 1
		if pending {
			k = 2
		}
		if n+k > max {
			truncated = true
			break
		}
		if pending {
			lastSpace = b.Len()
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
		n += k
	}
	out := b.String()
	if !truncated {
		return out
	}
	if lastSpace > 0 {
		out = out[:lastSpace]
	} else if n >= max {
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	return strings.TrimRight(out, " ,;:") + "…"
}
