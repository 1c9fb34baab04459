package mdtext

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// TestChunkedRenderMatchesWhole cuts every source at every place the scan
// allows and checks that the sections come out as from one parse.
func TestChunkedRenderMatchesWhole(t *testing.T) {
	t.Parallel()
	notes, err := os.ReadFile(filepath.Join(samples, "docs/notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		src     string
		minCuts int // chunks the scan must make beyond the first
		maxCuts int
	}{
		{"paragraphs and headings", "# A\n\none\ntwo\n\nthree\n\n## B\n\nfour\n", 4, 4},
		{"loose list stays one list", "- a\n\n- b\n\n  c\n\nafter\n", 1, 1},
		{"fence with blank lines and headings", "x\n\n```\n\n# not a heading\n\ntext\n```\n\nafter\n", 1, 1},
		{"tilde fence closed only by tildes", "x\n\n~~~~\n\n```\n\nin code\n~~~~\n\nout\n", 1, 1},
		{"html comment across blank lines", "x\n\n<!-- a\n\nhidden\n\n-->\n\nshown\n", 1, 1},
		{"pre across blank lines", "x\n\n<PRE>\n\nkept as is\n\n</pre>\n\nafter\n", 1, 1},
		{"fence inside an html block fools the scan", "<div>\n```\n</div>\n\nPara one.\n\n```\ncode\n\nNot a paragraph\n\n```\n\nTail.\n", 1, 3},
		{"unclosed fence", "x\n\n```\n\nrest\n\nof file\n", 0, 0},
		{"block quote and table", "> q\n\nA | B\n--|--\n1 | 2\n\nafter\n", 2, 2},
		{"indented code", "    code\n\n    more\n\nafter\n", 1, 1},
		{"reference links are never cut", "[x][r]\n\ntext\n\n[r]: https://r.example\n", 0, 0},
		{"sample notes", string(notes), 1, 1 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cuts := 0
			for start := nextCut(tc.src, 0, 1); start < len(tc.src); start = nextCut(tc.src, start, 1) {
				cuts++
			}
			if cuts < tc.minCuts || cuts > tc.maxCuts {
				t.Errorf("%d cuts, want %d to %d", cuts, tc.minCuts, tc.maxCuts)
			}
			limits := extract.Limits{MaxSectionChars: 20}
			whole, err := render(context.Background(), tc.src, len(tc.src)+1, limits)
			if err != nil {
				t.Fatal(err)
			}
			cut, err := render(context.Background(), tc.src, 1, limits)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cut, whole) {
				t.Errorf("cut:\n%q\nwhole:\n%q", texts(cut), texts(whole))
			}
		})
	}
}

func texts(us []extract.Unit) string {
	var sb strings.Builder
	for _, u := range us {
		sb.WriteString(u.Text + "\n---\n")
	}
	return sb.String()
}
