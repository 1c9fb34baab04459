package mdtext

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/samples/gen/hostile"
)

// Block quotes and lists nest at most maxNesting deep, in both parses;
// the markers past it stay as text and the text inside is kept. goldmark's
// cost per line grows with the depth times the line's offset, so a
// million nested quotes ran for many minutes.
func TestNestingIsBounded(t *testing.T) {
	t.Parallel()
	deep := maxNesting + 8
	var list strings.Builder
	for i := range deep {
		fmt.Fprintf(&list, "%s- item %d\n", strings.Repeat("  ", i), i)
	}
	for _, tc := range []struct{ name, src, last string }{
		{"quotes", strings.Repeat(">", deep) + " deep\n", "deep"},
		{"spaced quotes", strings.Repeat("> ", deep) + "deep\n", "deep"},
		{"lists", list.String(), fmt.Sprintf("item %d", deep-1)},
		{"list markers", strings.Repeat("- ", deep) + "deep\n", "deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, doc := range map[string]ast.Node{
				"render": parse([]byte(tc.src), nil),
				"gather": mdBlocks().Parser().Parse(text.NewReader([]byte(tc.src))),
			} {
				if got := maxDepth(doc); got != maxNesting {
					t.Errorf("%s parse: nested %d deep, want %d", name, got, maxNesting)
				}
			}
			units, err := ExtractString(context.Background(), tc.src, extract.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(units) != 1 || !strings.HasSuffix(units[0].Text, tc.last) {
				t.Fatalf("got %+v, want one section ending in %q", units, tc.last)
			}
		})
	}
}

// maxDepth is the deepest nesting of block quotes and lists in the tree.
func maxDepth(doc ast.Node) int {
	deepest := 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			deepest = max(deepest, nesting(n))
		}
		return ast.WalkContinue, nil
	})
	return deepest
}

// A million nested quotes, a thousand nested list items and a million
// open brackets, which took minutes before nesting was bounded.
func BenchmarkDeepNesting(b *testing.B) {
	var src strings.Builder
	if err := hostile.MarkdownDeepNesting(&src, 1_000_000); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(src.Len()))
	for b.Loop() {
		if _, err := ExtractString(context.Background(), src.String(), extract.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A paragraph holds at most maxOpenBrackets unclosed "[" open, the rest
// stay plain text: goldmark keeps half a kilobyte for each open one, so a
// million took 500 MB. Parsing sixteen times as many allocates about as
// much, and every bracket is kept. (Not parallel: it counts
// allocations.)
func TestOpenBracketsAreBounded(t *testing.T) {
	allocs := func(brackets int) float64 {
		src := []byte(strings.Repeat("[", brackets) + " text\n")
		return testing.AllocsPerRun(1, func() {
			if doc := parse(src, nil); doc.FirstChild() == nil {
				t.Fatal("no paragraph")
			}
		})
	}
	bounded, many := allocs(maxOpenBrackets), allocs(16*maxOpenBrackets)
	if many > 2*bounded {
		t.Fatalf("%.0f allocations for %d brackets, %.0f for %d: want them bounded", bounded, maxOpenBrackets, many, 16*maxOpenBrackets)
	}
	// The bound is per paragraph: links in the next one are links.
	src := strings.Repeat("[", 2*maxOpenBrackets) + "a\n\n[b](v)"
	units, err := ExtractString(context.Background(), src, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, u := range units {
		all.WriteString(u.Text)
	}
	if got := all.String(); strings.Count(got, "[") != 2*maxOpenBrackets || !strings.HasSuffix(got, "a\n\nb") {
		t.Fatalf("got %d brackets and %q, want %d and \"a\\n\\nb\"", strings.Count(got, "["), got[max(0, len(got)-10):], 2*maxOpenBrackets)
	}
}
