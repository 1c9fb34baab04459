package eval

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestExactScore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		got, want any
		score     float64
	}{
		{"letter", "letter", 1},
		{"Letter", "letter", 0}, // exact means exact: case counts
		{float64(3), 3, 1},      // an int and a decoded number of equal value
		{map[string]any{"a": []any{1.0, "x"}}, map[string]any{"a": []any{1, "x"}}, 1},
		{[]any{"a", "b"}, []any{"b", "a"}, 0},
		{true, "true", 0},
	}
	for _, c := range cases {
		if got := ExactScore(c.got, c.want); got != c.score {
			t.Errorf("ExactScore(%#v, %#v) = %v, want %v", c.got, c.want, got, c.score)
		}
	}
}

func TestNormaliseText(t *testing.T) {
	t.Parallel()
	if got := NormaliseText("  Anna  Brändli,\n(Sitzwerk AG)! "); got != "anna brändli sitzwerk ag" {
		t.Errorf("got %q", got)
	}
}

func TestFuzzyScore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		got, want any
		score     float64
	}{
		{"Anna Brändli", "anna  brändli.", 1},     // normalised away
		{"kitten", "sitting", 1 - 3.0/7},          // three edits over seven runes
		{"Zürich", "Zurich", 1 - 1.0/6},           // runes, not bytes
		{"", "", 1},                               // nothing equals nothing
		{"abc", "", 0},                            // nothing in common
		{float64(12), "12", 1},                    // a number as its text
		{"completely different", "xyz", 0.05},     // only the y survives: 19 edits over 20
		{"budget", "Budget approved", 6.0 / 15.0}, // nine insertions over fifteen
	}
	for _, c := range cases {
		if got := FuzzyScore(c.got, c.want); !near(got, c.score) {
			t.Errorf("FuzzyScore(%q, %q) = %v, want %v", c.got, c.want, got, c.score)
		}
	}
}

func TestFuzzyScoreBoundsLongTexts(t *testing.T) {
	t.Parallel()
	long := make([]byte, 3*maxFuzzyRunes)
	for i := range long {
		long[i] = 'a'
	}
	// Past the bound both read the same, however the tails differ.
	if got := FuzzyScore(string(long)+"xyz", string(long)+"q"); got != 1 {
		t.Errorf("got %v, want 1 for texts equal up to the bound", got)
	}
}

func TestNumericScore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		got, want any
		tol       float64
		score     float64
	}{
		{9840.0, 9840.0, 0, 1},
		{9840.4, 9840.0, 0.5, 1},
		{9841.0, 9840.0, 0.5, 0},
		{"9,840.00", 9840.0, 0, 1}, // a number written with separators
		{"CHF 9840", 9840.0, 1, 0}, // not a number
		{nil, 0.0, 1, 0},
		{-2.0, 2.0, 3.99, 0},
		{-2.0, 2.0, 4, 1},
	}
	for _, c := range cases {
		if got := NumericScore(c.got, c.want, c.tol); got != c.score {
			t.Errorf("NumericScore(%#v, %#v, %v) = %v, want %v", c.got, c.want, c.tol, got, c.score)
		}
	}
}

func TestScoreListCountsOneToOne(t *testing.T) {
	t.Parallel()
	got := []any{"chairs", "chairs", "office", "invoice"}
	want := []any{"chairs", "office", "delivery"}
	r := ScoreList(got, want, ExactScore, 1)
	// The second "chairs" has no expected item left to match.
	if r.Matched != 2 || !near(r.Precision, 0.5) || !near(r.Recall, 2.0/3) || !near(r.F1, 2*0.5*(2.0/3)/(0.5+2.0/3)) {
		t.Errorf("got %+v", r)
	}
}

func TestScoreListFuzzyTakesBestPairFirst(t *testing.T) {
	t.Parallel()
	// "Anna Brandli" is close to both expected names; greedy on the best
	// pair gives it to "Anna Brändli", leaving "Anna Brand" its own exact match.
	got := []any{"Anna Brand", "Anna Brandli"}
	want := []any{"Anna Brändli", "Anna Brand"}
	r := ScoreList(got, want, FuzzyScore, 0.8)
	if r.Matched != 2 {
		t.Errorf("matched %d, want 2: %+v", r.Matched, r)
	}
	// Below the threshold nothing matches.
	if r := ScoreList([]any{"Oslo"}, []any{"Osaka"}, FuzzyScore, 0.8); r.Matched != 0 || r.F1 != 0 {
		t.Errorf("got %+v, want no match", r)
	}
}

func TestScoreListNumericItems(t *testing.T) {
	t.Parallel()
	item := func(g, w any) float64 { return NumericScore(g, w, 0.5) }
	r := ScoreList([]any{737.2, "9,840", 12.0}, []any{9840.0, 737.0}, item, 1)
	if r.Matched != 2 || !near(r.Recall, 1) || !near(r.Precision, 2.0/3) {
		t.Errorf("got %+v", r)
	}
}

func TestScoreListEmpty(t *testing.T) {
	t.Parallel()
	if r := ScoreList(nil, nil, ExactScore, 1); r.F1 != 1 {
		t.Errorf("two empty lists: %+v, want full agreement", r)
	}
	if r := ScoreList(nil, []any{"a"}, ExactScore, 1); r.F1 != 0 || r.Recall != 0 {
		t.Errorf("nothing produced: %+v, want 0", r)
	}
	if r := ScoreList([]any{"a"}, nil, ExactScore, 1); r.Precision != 0 || r.Recall != 1 || r.F1 != 0 {
		t.Errorf("nothing expected, something produced: %+v", r)
	}
}

func TestListResultMetric(t *testing.T) {
	t.Parallel()
	r := ListResult{Precision: 0.25, Recall: 1, F1: 0.4}
	if r.Score(MetricRecall) != 1 || r.Score(MetricPrecision) != 0.25 || r.Score(MetricF1) != 0.4 || r.Score("") != 0.4 {
		t.Errorf("metrics of %+v wrong", r)
	}
}
