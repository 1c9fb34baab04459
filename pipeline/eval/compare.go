package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/agext/levenshtein"
)

// Comparator names, as truth files spell them.
const (
	Exact   = "exact"
	Fuzzy   = "fuzzy"
	Numeric = "numeric"
	List    = "list"
)

// List metrics: which of precision, recall and F1 is a list field's score.
const (
	MetricF1        = "f1"
	MetricPrecision = "precision"
	MetricRecall    = "recall"
)

// maxFuzzyRunes bounds the text the edit distance is computed on, whose
// cost grows with the product of the two lengths.
const maxFuzzyRunes = 8192

// defaultMatch is the least fuzzy score at which two list items match.
const defaultMatch = 0.8

// ExactScore is 1 when got and want are the same JSON value, else 0.
// Numbers compare by value (decoded JSON numbers are float64).
func ExactScore(got, want any) float64 {
	if reflect.DeepEqual(normaliseJSON(got), normaliseJSON(want)) {
		return 1
	}
	return 0
}

// normaliseJSON turns any value into what encoding/json decodes it to, so
// that an int and a float64 of equal value compare equal.
func normaliseJSON(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(raw, &out) != nil {
		return v
	}
	return out
}

// NormaliseText lower-cases s and reduces every run of characters other
// than letters and digits to one space, trimmed: what fuzzy comparison
// and snippet search see.
func NormaliseText(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		space = true
	}
	return b.String()
}

// FuzzyScore is 1 minus the Levenshtein distance between the normalised
// texts over the longer one's length in runes: 1 for equal texts, 0 for
// nothing in common. Non-string values are compared as their JSON text.
func FuzzyScore(got, want any) float64 {
	a, b := NormaliseText(textOf(got)), NormaliseText(textOf(want))
	ra, rb := truncateRunes(a), truncateRunes(b)
	longer := max(len(ra), len(rb))
	if longer == 0 {
		return 1
	}
	d := levenshtein.Distance(string(ra), string(rb), nil)
	return 1 - float64(d)/float64(longer)
}

func truncateRunes(s string) []rune {
	r := []rune(s)
	if len(r) > maxFuzzyRunes {
		r = r[:maxFuzzyRunes]
	}
	return r
}

func textOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// NumericScore is 1 when got is a number (or a string holding one, with
// "," and "_" as digit separators) within tolerance of want, else 0.
func NumericScore(got, want any, tolerance float64) float64 {
	g, ok1 := number(got)
	w, ok2 := number(want)
	if ok1 && ok2 && math.Abs(g-w) <= tolerance {
		return 1
	}
	return 0
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case string:
		s := strings.NewReplacer(",", "", "_", "").Replace(strings.TrimSpace(v))
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	return 0, false
}

// ListResult is a list field's agreement after one-to-one matching.
type ListResult struct {
	Matched   int     `json:"matched"`
	Got       int     `json:"got"`
	Expected  int     `json:"expected"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Score is the named metric of r.
func (r ListResult) Score(metric string) float64 {
	switch metric {
	case MetricPrecision:
		return r.Precision
	case MetricRecall:
		return r.Recall
	}
	return r.F1
}

// ScoreList matches produced items to expected ones one to one and
// counts the matches. Matching is greedy: every pair is scored with item,
// pairs scoring at least minMatch are taken best first (ties in list
// order), each item in at most one pair. Greedy rather than an optimal
// assignment: with a threshold on the pair score it finds the same number
// of matches except when one item is nearly equal to two others, and
// keeps the cost at one sort of the pairs. Empty lists agree fully.
func ScoreList(got, want []any, item func(got, want any) float64, minMatch float64) ListResult {
	type pair struct {
		g, w  int
		score float64
	}
	var pairs []pair
	for wi, w := range want {
		for gi, g := range got {
			if s := item(g, w); s >= minMatch {
				pairs = append(pairs, pair{gi, wi, s})
			}
		}
	}
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].score > pairs[j].score })
	usedG, usedW := make([]bool, len(got)), make([]bool, len(want))
	r := ListResult{Got: len(got), Expected: len(want)}
	for _, p := range pairs {
		if usedG[p.g] || usedW[p.w] {
			continue
		}
		usedG[p.g], usedW[p.w] = true, true
		r.Matched++
	}
	r.Precision, r.Recall = ratio(r.Matched, r.Got), ratio(r.Matched, r.Expected)
	if r.Precision+r.Recall > 0 {
		r.F1 = 2 * r.Precision * r.Recall / (r.Precision + r.Recall)
	}
	return r
}

// ratio is n/d, with nothing out of nothing counted as full agreement.
func ratio(n, d int) float64 {
	if d == 0 {
		return 1
	}
	return float64(n) / float64(d)
}

// defaultCompare is the comparator for an expected value whose field
// names none.
func defaultCompare(want any) string {
	switch want.(type) {
	case string:
		return Fuzzy
	case float64:
		return Numeric
	case []any:
		return List
	}
	return Exact
}

// itemScorer is the comparator function of a scalar comparator name.
func itemScorer(name string, tolerance float64) (func(got, want any) float64, error) {
	switch name {
	case Exact:
		return ExactScore, nil
	case Fuzzy:
		return FuzzyScore, nil
	case Numeric:
		return func(g, w any) float64 { return NumericScore(g, w, tolerance) }, nil
	}
	return nil, fmt.Errorf("comparator %q is not one of %s, %s, %s", name, Exact, Fuzzy, Numeric)
}
