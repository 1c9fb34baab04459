package analyze

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func seg(keywords []Keyword, entities ...Entity) SegmentResult {
	return SegmentResult{Language: "en", Keywords: keywords, Entities: entities}
}

func TestGraphSmall(t *testing.T) {
	t.Parallel()
	maria := Entity{Type: "name", Value: "Maria Schneider", Count: 1}
	segs := []SegmentInput{
		{Index: 3, Result: seg([]Keyword{{"invoice", 4}, {"payment", 1}}, maria)},
		{Index: 1, Result: seg([]Keyword{{"invoice", 2}}, maria, Entity{Type: "date", Value: "2024-03-05", Count: 2})},
		{Index: 2, Result: seg([]Keyword{{"payment", 3}})},
	}
	g := BuildGraph(segs)
	wantNodes := []Node{
		{ID: "keyword:invoice", Label: "invoice", Kind: "keyword", Weight: 6, SegmentCount: 2, Segments: []int{1, 3}},
		{ID: "keyword:payment", Label: "payment", Kind: "keyword", Weight: 4, SegmentCount: 2, Segments: []int{2, 3}},
		// equal weight: more segments first
		{ID: "name:Maria Schneider", Label: "Maria Schneider", Kind: "name", Weight: 2, SegmentCount: 2, Segments: []int{1, 3}},
		{ID: "date:2024-03-05", Label: "2024-03-05", Kind: "date", Weight: 2, SegmentCount: 1, Segments: []int{1}},
	}
	if got, _ := json.Marshal(g.Nodes); string(got) != mustJSON(t, wantNodes) {
		t.Errorf("nodes:\n%s\nwant\n%s", got, mustJSON(t, wantNodes))
	}
	wantEdges := []Edge{
		{"keyword:invoice", "name:Maria Schneider", 2},
		{"date:2024-03-05", "keyword:invoice", 1},
		{"date:2024-03-05", "name:Maria Schneider", 1},
		{"keyword:invoice", "keyword:payment", 1},
		{"keyword:payment", "name:Maria Schneider", 1},
	}
	if !slices.Equal(g.Edges, wantEdges) {
		t.Errorf("edges:\n%+v\nwant\n%+v", g.Edges, wantEdges)
	}
	if g.Segments != 3 || g.TotalNodes != 4 {
		t.Errorf("segments %d, total nodes %d", g.Segments, g.TotalNodes)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// synthSegments makes n segment results with a skewed vocabulary, the
// shape of a long real document.
func synthSegments(n int, seed uint64) []SegmentInput {
	rng := rand.New(rand.NewPCG(seed, 1))
	zipf := rand.NewZipf(rng, 1.2, 1, 5_000)
	out := make([]SegmentInput, n)
	for i := range out {
		var r SegmentResult
		r.Language = "en"
		seen := map[uint64]bool{}
		for len(r.Keywords) < 10 {
			w := zipf.Uint64()
			if !seen[w] {
				seen[w] = true
				r.Keywords = append(r.Keywords, Keyword{Term: "term" + strconv.FormatUint(w, 10), Count: 1 + rng.IntN(6)})
			}
		}
		for j := range 8 {
			types := []string{"name", "date", "amount", "email"}
			typ := types[j%len(types)]
			v := typ + strconv.FormatUint(zipf.Uint64()%uint64(200+j*500), 10)
			r.Entities = append(r.Entities, Entity{Type: typ, Value: v, Count: 1 + rng.IntN(2)})
		}
		r.Summary = []Sentence{{Text: "Sentence " + strconv.Itoa(i) + " about term1 and term2.", Score: float64(rng.IntN(1000)) / 1000}}
		r.Words, r.Chars, r.Sentences = 500, 3000, 20
		out[i] = SegmentInput{Index: i + 1, Result: r}
	}
	return out
}

func TestGraphBoundsAndQuota(t *testing.T) {
	t.Parallel()
	segs := synthSegments(2_000, 7)
	b := NewGraphBuilder(GraphOptions{MaxNodes: 40, MaxEdges: 100, MaxNodeSegments: 50})
	for _, s := range segs {
		b.Add(s.Index, s.Result)
	}
	g := b.Graph()
	if len(g.Nodes) != 40 || len(g.Edges) != 100 {
		t.Fatalf("%d nodes, %d edges", len(g.Nodes), len(g.Edges))
	}
	if g.TotalNodes <= 40 {
		t.Errorf("total nodes %d: the test needs more nodes than the cap", g.TotalNodes)
	}
	entities, ids := 0, map[string]bool{}
	for i, n := range g.Nodes {
		ids[n.ID] = true
		if n.Kind != KindKeyword {
			entities++
		}
		if len(n.Segments) > 50 || len(n.Segments) > n.SegmentCount || !slices.IsSorted(n.Segments) {
			t.Errorf("node %s: %d segments listed of %d", n.ID, len(n.Segments), n.SegmentCount)
		}
		if i > 0 && g.Nodes[i-1].Weight < n.Weight {
			t.Errorf("nodes out of order at %d", i)
		}
	}
	if entities != 20 {
		t.Errorf("%d entity nodes, want half of 40", entities)
	}
	for i, e := range g.Edges {
		if !ids[e.Source] || !ids[e.Target] || e.Source >= e.Target || e.Weight <= 0 {
			t.Errorf("bad edge %+v", e)
		}
		if i > 0 && g.Edges[i-1].Weight < e.Weight {
			t.Errorf("edges out of order at %d", i)
		}
	}
}

func TestGraphOrderIndependentAndIdempotent(t *testing.T) {
	t.Parallel()
	segs := synthSegments(500, 3)
	want := mustJSON(t, BuildGraph(segs))
	shuffled := slices.Clone(segs)
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b := NewGraphBuilder(GraphOptions{})
	for _, s := range shuffled {
		b.Add(s.Index, s.Result)
		b.Add(s.Index, s.Result) // a re-read segment counts once
	}
	if got := mustJSON(t, b.Graph()); got != want {
		t.Error("graph depends on the order segments were added")
	}
	if got := mustJSON(t, b.Graph()); got != want {
		t.Error("Graph is not repeatable")
	}
}

func TestGraphEmptyAndJunk(t *testing.T) {
	t.Parallel()
	g := NewGraphBuilder(GraphOptions{}).Graph()
	if mustJSON(t, g) != `{"nodes":[],"edges":[],"segments":0,"total_nodes":0}` {
		t.Errorf("empty graph %s", mustJSON(t, g))
	}
	b := NewGraphBuilder(GraphOptions{MaxItemsPerSegment: 2})
	b.Add(1, seg([]Keyword{{"", 3}, {"zero", 0}, {"a", 1}, {"b", 1}, {"c", 1}}))
	g = b.Graph()
	if len(g.Nodes) != 2 || g.Nodes[0].Label != "a" || g.Nodes[1].Label != "b" {
		t.Errorf("nodes %+v", g.Nodes)
	}
}

func BenchmarkGraph(b *testing.B) {
	segs := synthSegments(30_000, 1)
	b.ReportAllocs()
	for b.Loop() {
		g := NewGraphBuilder(GraphOptions{})
		for _, s := range segs {
			g.Add(s.Index, s.Result)
		}
		if len(g.Graph().Nodes) != DefaultGraphNodes {
			b.Fatal("short graph")
		}
	}
	b.ReportMetric(float64(len(segs))*float64(b.N)/b.Elapsed().Seconds(), "segments/s")
}
