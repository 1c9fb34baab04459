package mdtext

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
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
		{"fence inside an html block fools the scan", "<div>\n```\n</div>\n\nPara one.\n\n```\ncode\n\nNot a paragraph\n\n```\n\nTail.\n", 0, 0},
		{"unclosed fence", "x\n\n```\n\nrest\n\nof file\n", 0, 0},
		{"block quote and table", "> q\n\nA | B\n--|--\n1 | 2\n\nafter\n", 2, 2},
		{"indented code", "    code\n\n    more\n\nafter\n", 1, 1},
		{"reference links are cut", "[x][r]\n\ntext\n\n[r]: mailto:r@r.example\n\n[y][r]\n", 1, 1},
		{"html block fools the scan into an open fence", "<div>\n```\n</div>\n\nPara.\n\n```\n\nstill code\n\nand more\n\n```\n\nTail.\n" + strings.Repeat("\nMore text.\n", 30), 1, 1 << 20},
		{"sample notes", string(notes), 1, 1 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if cuts := len(chunksOf(t, tc.src, 1)) - 1; cuts < tc.minCuts || cuts > tc.maxCuts {
				t.Errorf("%d cuts, want %d to %d", cuts, tc.minCuts, tc.maxCuts)
			}
			limits := extract.Limits{MaxSectionChars: 20}
			whole, err := wholeRender(context.Background(), tc.src, len(tc.src)+1, limits)
			if err != nil {
				t.Fatal(err)
			}
			for _, part := range []int{1, 3, len(tc.src)} {
				cut, err := streamString(context.Background(), tc.src, limits, 1, part)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(cut, whole) {
					t.Errorf("parts of %d: cut:\n%q\nwhole:\n%q", part, texts(cut), texts(whole))
				}
			}
		})
	}
}

// chunksOf returns the chunks the chunker cuts src into.
func chunksOf(t *testing.T, src string, target int) []string {
	t.Helper()
	c := &chunker{src: &stringSource{s: src, part: 5}, target: target, parse: func(b []byte) ast.Node { return parse(b, nil) }}
	var out []string
	for {
		chunk, _, err := c.next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if chunk == nil {
			break
		}
		out = append(out, string(chunk))
	}
	if strings.Join(out, "") != src {
		t.Fatalf("the chunks %q do not make up the source", out)
	}
	return out
}

// streamString is ExtractString with chunks of target bytes, read part
// bytes at a time.
func streamString(ctx context.Context, src string, limits extract.Limits, target, part int) ([]extract.Unit, error) {
	return extracttest.Gather(func(emit func(extract.Unit) error) (int, error) {
		return stream(ctx, &stringSource{s: src, part: part}, limits, target, emit)
	})
}

func texts(us []extract.Unit) string {
	var sb strings.Builder
	for _, u := range us {
		sb.WriteString(u.Text + "\n---\n")
	}
	return sb.String()
}

// A cut that goldmark shows inside a block the scan missed moves past the
// block, and the chunks after it are small again: the rest of the file
// is not parsed whole.
func TestChunksResumeAfterAMisreadBlock(t *testing.T) {
	t.Parallel()
	fooled := "<div>\n```\n</div>\n\nPara.\n\n```\n\n" + strings.Repeat("still code\n\n", 40) + "```\n\n"
	src := strings.Repeat("Before.\n\n", 20) + fooled + strings.Repeat("After.\n\n", 200)
	chunks := chunksOf(t, src, 32)
	var long int
	for i, c := range chunks {
		if strings.Contains(c, "still code") && !strings.Contains(c, "<div>") {
			t.Fatalf("chunk %d starts inside the fence: %q", i, c)
		}
		if len(c) > 64 {
			long++
		}
	}
	if long > 1 || len(chunks) < 50 {
		t.Fatalf("%d chunks, %d of them long: %q", len(chunks), long, chunks)
	}
}
