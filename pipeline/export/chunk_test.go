package export

import (
	"slices"
	"strings"
	"testing"
)

func chunkAll(t *testing.T, budget, overlap int, titled bool, segments ...string) []Chunk {
	t.Helper()
	var out []Chunk
	c := &Chunker{Budget: budget, Overlap: overlap, Emit: func(ch Chunk) error {
		out = append(out, ch)
		return nil
	}}
	for i, s := range segments {
		if err := c.Add(i+1, s, titled); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, ch := range out {
		if ch.Tokens > budget || Tokens(ch.Text) != ch.Tokens {
			t.Errorf("chunk %d counts %d tokens (text %d), budget %d", ch.Index, ch.Tokens, Tokens(ch.Text), budget)
		}
	}
	return out
}

func words(n int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }

func TestTokensCountWordsAndCharacters(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a b c": 3, "internationalisation": 5, "naïve café": 3} {
		if got := Tokens(s); got != want {
			t.Errorf("Tokens(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestChunksKeepToSectionsAndSayWhereTheyCameFrom(t *testing.T) {
	doc := []string{
		"# Intro\n\n" + words(10, "alpha"),
		words(10, "beta") + "\n\n## Details\n\n" + words(10, "gamma"),
		"# Next\n\n" + words(10, "delta"),
	}
	got := chunkAll(t, 50, 0, false, doc...)
	want := []struct {
		segs []int
		path []string
	}{
		{[]int{1, 2}, []string{"Intro"}},         // one section over two segments
		{[]int{2}, []string{"Intro", "Details"}}, // a subsection starts a chunk
		{[]int{3}, []string{"Next"}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d chunks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if !slices.Equal(got[i].Segments, w.segs) || !slices.Equal(got[i].HeadingPath, w.path) || got[i].Index != i+1 {
			t.Errorf("chunk %d: segments %v path %v, want %v %v", i+1, got[i].Segments, got[i].HeadingPath, w.segs, w.path)
		}
	}
}

func TestTitledSectionsTakeTheirFirstLineAsHeading(t *testing.T) {
	got := chunkAll(t, 50, 0, true, "Decisions\n\n"+words(5, "x"), "Owners\n\n"+words(5, "y"))
	if len(got) != 2 || !slices.Equal(got[0].HeadingPath, []string{"Decisions"}) || !slices.Equal(got[1].HeadingPath, []string{"Owners"}) {
		t.Errorf("%+v", got)
	}
}

func TestTablesAndCodeStayWholeWhenTheyFit(t *testing.T) {
	table := "| a | b |\n|---|---|\n| " + words(8, "c") + " | d |\n| e | f |"
	code := "```go\nfunc f() {\n\n\treturn\n}\n```"
	tabs := "Item\tCost\nPark\t$1\nPaths\t$2"
	text := words(25, "p") + "\n\n" + table + "\n\n" + words(25, "q") + "\n\n" + code + "\n\n" + tabs
	for _, ch := range chunkAll(t, 30, 0, false, text) {
		for _, whole := range []string{table, code, tabs} {
			first := strings.SplitN(whole, "\n", 2)[0]
			if strings.Contains(ch.Text, first) && !strings.Contains(ch.Text, whole) {
				t.Errorf("a table or code block is split: chunk %q", ch.Text)
			}
		}
	}
}

func TestLargeBlocksAreSplitAndOverlap(t *testing.T) {
	var rows []string
	for range 40 {
		rows = append(rows, "| cell | cell | cell |")
	}
	table := strings.Join(rows, "\n")
	got := chunkAll(t, 40, 0, false, table)
	if len(got) < 2 {
		t.Fatalf("a table over the budget is one chunk: %+v", got)
	}
	for _, ch := range got {
		for _, line := range strings.Split(ch.Text, "\n") {
			if line != "| cell | cell | cell |" {
				t.Errorf("a table split inside a row: %q", line)
			}
		}
	}

	long := words(200, "w")
	got = chunkAll(t, 50, 10, false, long)
	if len(got) < 4 {
		t.Fatalf("%d chunks of a 200-word paragraph at 50 tokens", len(got))
	}
	total := 0
	for i, ch := range got {
		n := len(strings.Fields(ch.Text))
		total += n
		if i > 0 && n <= 10 {
			t.Errorf("chunk %d holds only its overlap", i+1)
		}
	}
	// Every chunk after the first repeats 10 words of the one before.
	if want := 200 + 10*(len(got)-1); total != want {
		t.Errorf("%d words in all, want %d (200 plus 10 of overlap per later chunk)", total, want)
	}
}
