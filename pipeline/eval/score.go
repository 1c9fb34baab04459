package eval

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// FieldScore is how one field of one document scored.
type FieldScore struct {
	Path    string      `json:"path"`
	Compare string      `json:"compare"`
	Weight  float64     `json:"weight"`
	Score   float64     `json:"score"`
	List    *ListResult `json:"list,omitempty"` // list fields
	Got     any         `json:"got,omitempty"`
	Missing string      `json:"missing,omitempty"` // why there was no value
}

// PageScore is which snippets of one page were found.
type PageScore struct {
	Page    string   `json:"page"`
	Found   []string `json:"found"`
	Missing []string `json:"missing"`
}

// DocScore is one document's scores.
type DocScore struct {
	Document   string       `json:"document"`
	Truth      string       `json:"truth"`
	Fields     []FieldScore `json:"fields"`
	Pages      []PageScore  `json:"pages,omitempty"`
	PagesScore *float64     `json:"pages_score,omitempty"` // share of snippets found
	Score      float64      `json:"score"`                 // weighted mean of fields and pages
}

// Score compares what a workflow produced with the truth about its
// document.
func Score(t Truth, o Outputs) DocScore {
	d := DocScore{Document: t.Document, Truth: t.File, Fields: []FieldScore{}}
	var sum, weights float64
	for _, f := range t.Fields {
		fs := scoreField(f, o)
		d.Fields = append(d.Fields, fs)
		sum += fs.Score * f.Weight
		weights += f.Weight
	}
	if len(t.Pages) > 0 {
		found, total := 0, 0
		d.Pages = scorePages(t.Pages, o.Pages)
		for _, p := range d.Pages {
			found += len(p.Found)
			total += len(p.Found) + len(p.Missing)
		}
		share := ratio(found, total)
		d.PagesScore = &share
		sum += share * t.PagesWeight
		weights += t.PagesWeight
	}
	if weights > 0 {
		d.Score = sum / weights
	}
	return d
}

func (t Truth) totalWeight() float64 {
	w := 0.0
	for _, f := range t.Fields {
		w += f.Weight
	}
	if len(t.Pages) > 0 {
		w += t.PagesWeight
	}
	return w
}

func scoreField(f Field, o Outputs) FieldScore {
	fs := FieldScore{Path: f.Path, Compare: f.Compare, Weight: f.Weight}
	got, err := o.Value(f.Path)
	if err != nil {
		if errors.Is(err, errMissing) {
			fs.Missing = strings.TrimPrefix(err.Error(), errMissing.Error()+": ")
		} else {
			fs.Missing = err.Error()
		}
		return fs
	}
	fs.Got = got
	switch f.Compare {
	case Exact:
		fs.Score = ExactScore(got, f.Expect)
	case Fuzzy:
		fs.Score = FuzzyScore(got, f.Expect)
	case Numeric:
		fs.Score = NumericScore(got, f.Expect, f.Tolerance)
	case List:
		item, _ := itemScorer(f.Items, f.Tolerance) // checked when parsed
		gotList, ok := got.([]any)
		if !ok {
			gotList = []any{got} // one value stands for a list of one
		}
		r := ScoreList(gotList, f.Expect.([]any), item, f.Match)
		fs.List, fs.Score = &r, r.Score(f.Metric)
	}
	return fs
}

// scorePages looks for each page's snippets in that segment's text (or
// the whole text for AnyPage), both normalised as fuzzy text is.
func scorePages(want map[string][]string, pages []string) []PageScore {
	norm := make([]string, len(pages))
	for i, p := range pages {
		norm[i] = " " + NormaliseText(p) + " "
	}
	keys := slices.SortedFunc(maps.Keys(want), comparePages)
	out := make([]PageScore, 0, len(keys))
	for _, page := range keys {
		ps := PageScore{Page: page, Found: []string{}, Missing: []string{}}
		text := " " + strings.Join(norm, " ") + " "
		if page != AnyPage {
			n, _ := strconv.Atoi(page) // checked when parsed
			text = ""
			if n <= len(norm) {
				text = norm[n-1]
			}
		}
		for _, s := range want[page] {
			// Whole words: "2024" is not found in "20245".
			if strings.Contains(text, " "+NormaliseText(s)+" ") {
				ps.Found = append(ps.Found, s)
			} else {
				ps.Missing = append(ps.Missing, s)
			}
		}
		out = append(out, ps)
	}
	return out
}

// comparePages orders page keys by number, AnyPage last.
func comparePages(a, b string) int {
	na, ea := strconv.Atoi(a)
	nb, eb := strconv.Atoi(b)
	switch {
	case ea != nil && eb != nil:
		return strings.Compare(a, b)
	case ea != nil:
		return 1
	case eb != nil:
		return -1
	}
	return na - nb
}

// Summary is a version's scores over a truth set.
type Summary struct {
	Score  float64            `json:"score"`  // mean of the documents' scores
	Fields map[string]float64 `json:"fields"` // mean score per field path, over the documents that have it
	Pages  *float64           `json:"pages,omitempty"`
}

// Summarise averages document scores.
func Summarise(docs []DocScore) Summary {
	s := Summary{Fields: map[string]float64{}}
	counts := map[string]int{}
	pages, pageDocs := 0.0, 0
	for _, d := range docs {
		s.Score += d.Score
		for _, f := range d.Fields {
			s.Fields[f.Path] += f.Score
			counts[f.Path]++
		}
		if d.PagesScore != nil {
			pages += *d.PagesScore
			pageDocs++
		}
	}
	if len(docs) > 0 {
		s.Score /= float64(len(docs))
	}
	for p, n := range counts {
		s.Fields[p] /= float64(n)
	}
	if pageDocs > 0 {
		mean := pages / float64(pageDocs)
		s.Pages = &mean
	}
	return s
}
