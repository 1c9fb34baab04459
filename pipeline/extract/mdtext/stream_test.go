package mdtext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// dribble hands out a source's text a few bytes at a time, so that the
// chunker's reads end anywhere: in a character, a CRLF's place, a line.
type dribble struct {
	src     source
	n       int
	pending []byte
}

func (d *dribble) Next() ([]byte, error) {
	for len(d.pending) == 0 {
		b, err := d.src.Next()
		if err != nil {
			return nil, err
		}
		d.pending = b
	}
	k := min(d.n, len(d.pending))
	b := d.pending[:k]
	d.pending = d.pending[k:]
	return b, nil
}

func (d *dribble) Rewind() error {
	d.pending = nil
	return d.src.Rewind()
}

// streamFile is Stream with chunks of target bytes, the text read part
// bytes at a time, collecting the units.
func streamFile(ctx context.Context, path string, limits extract.Limits, target, part int) ([]extract.Unit, error) {
	limits = limits.WithDefaults()
	t, err := plaintext.OpenText(ctx, path, limits)
	if err != nil {
		return nil, err
	}
	defer func() { _ = t.Close() }()
	return extracttest.Gather(func(emit func(extract.Unit) error) (int, error) {
		return stream(ctx, &dribble{src: t, n: part}, limits, target, emit)
	})
}

func utf16LE(s string) []byte {
	out := []byte{0xFF, 0xFE}
	for _, c := range utf16.Encode([]rune(s)) {
		out = append(out, byte(c), byte(c>>8))
	}
	return out
}

// mixedMarkdown is n pieces of every kind of block, so that chunks of any
// size cut between (and, for the scan, try to cut inside) all of them:
// fences with blank lines, fake headings and fake definitions inside,
// HTML blocks the scan follows and one it cannot, loose and nested lists,
// tables, block quotes, and reference links used before and after their
// definitions, defined twice (the first wins), and defined inside a
// block quote and a list item. A mailto: destination shows in the text,
// so a link resolved to the wrong definition shows too; an unresolved
// one stays literal.
func mixedMarkdown(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "# Part %d\n\nSee [the office][pmo%d] and [later][after%d] and [Dup][dup].\n\n", i, i, i)
		fmt.Fprintf(&sb, "[pmo%d]: mailto:pmo%d@x.example \"Title %d\"\n[dup]: mailto:dup%d@x.example\n\n", i, i, i, i)
		switch i % 8 {
		case 0:
			fmt.Fprintf(&sb, "```go\nfunc f%d() {}\n\n# not a heading\n\n[fake%d]: mailto:fake@x.example\n\nStill code.\n```\n\n", i, i)
		case 1:
			fmt.Fprintf(&sb, "- item %d\n\n- loose [item][after%d]\n\n  continued\n  - nested\n\n1. one\n2. two\n\n", i, i)
		case 2:
			fmt.Fprintf(&sb, "| A | B |\n|---|---|\n| %d | [cell][pmo%d] |\n| x | y |\n\n", i, i)
		case 3:
			fmt.Fprintf(&sb, "<!-- a comment\n\nacross blank lines %d\n\n-->\n\n<pre>\n\nkept\n\n</pre>\n\n<div>\n<b>Bold %d</b>\n</div>\n\n", i, i)
		case 4:
			fmt.Fprintf(&sb, "> Quoted %d\n>\n> [inq%d]: mailto:inq%d@x.example\n\nUses [quote][inq%d].\n\n", i, i, i, i)
		case 5:
			fmt.Fprintf(&sb, "~~~~\n\n```\n\ntilde fence %d\n~~~~\n\n- [li%d]: mailto:li%d@x.example\n\nUses [list][li%d].\n\n", i, i, i, i)
		case 6:
			// An HTML block with a fence line in it: the scan takes it for a
			// fence, goldmark does not, and the scan must be put right.
			fmt.Fprintf(&sb, "<div>\n```\n</div>\n\nPara %d.\n\n```\ncode\n\nNot a paragraph %d\n\n```\n\nAfter.\n\n", i, i)
		case 7:
			fmt.Fprintf(&sb, "Setext %d\n---\n\n    indented code\n\n    more\n\nText with *emphasis* and <https://a.example/%d>.\n\n", i, i)
		}
		fmt.Fprintf(&sb, "Paragraph %d with a\nsoft break and [shortcut%d] and [collapsed%d][].\n\n", i, i, i)
		fmt.Fprintf(&sb, "[after%d]: mailto:after%d@x.example\n[shortcut%d]: mailto:s%d@x.example\n[collapsed%d]: <mailto:c%d@x.example>\n\n", i, i, i, i, i, i)
	}
	return sb.String()
}

// chunkTargets are the chunk sizes the equivalence tests use: every line
// a chunk candidate, small ones, and the default.
var chunkTargets = []int{1, 7, 64, 1000, chunkBytes}

func TestStreamMatchesWholeFile(t *testing.T) {
	t.Parallel()
	notes, err := os.ReadFile(filepath.Join(samples, "docs/notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	mixed := mixedMarkdown(16)
	inputs := []struct {
		name string
		b    []byte
	}{
		{"sample notes", notes},
		{"mixed", []byte(mixed)},
		{"mixed crlf", []byte(strings.ReplaceAll(mixed, "\n", "\r\n"))},
		{"mixed cr", []byte(strings.ReplaceAll(mixed, "\n", "\r"))},
		{"mixed utf-16", utf16LE("Grüße aus 東京\n\n" + mixed)},
		{"mixed with bom", []byte("\xEF\xBB\xBF" + mixed)},
		{"windows-1252", []byte(strings.Repeat("# Caf\xe9\r\n\r\nLe d\xe9l\xe9gu\xe9 \x93[x][r]\x94.\r\n\r\n[r]: mailto:r\xe9@x.example\r\n\r\n", 30))},
		{"definition before use", []byte("[r]: mailto:r@x.example\n\nText.\n\nUse [r].\n")},
		{"definition after use", []byte("Use [r].\n\nText.\n\n[r]: mailto:r@x.example\n")},
		{"first definition wins", []byte("[r]: mailto:one@x.example\n\nUse [r].\n\nText.\n\n[R]: mailto:two@x.example\n")},
		{"definition only in code", []byte("Use [r].\n\n```\n[r]: mailto:r@x.example\n```\n\nText.\n")},
		{"unclosed fence", []byte("x\n\n```\n\nrest\n\n[r]: mailto:r@x.example\n\nof file\n")},
		{"unclosed comment", []byte("x\n\n<!--\n\nrest\n\nof file\n")},
		{"no trailing newline", []byte("# A\n\ntext\n\nlast [r]\n\n[r]: mailto:r@x.example")},
	}
	for _, tc := range []struct {
		name string
		src  string
	}{
		{"headings", "# Title\n\nSome *emphasis* and **strong** and `code`\nsoft break.\n\n## Next\n\nMore ~~old~~ text.\n"},
		{"table", "| Name | Due |\n|------|-----|\n| Wei **Zhang** | 15 Nov |\n| Olga | 2 Dec |\n"},
		{"lists", "- one\n- two\n  - two.a\n- [x] done\n\n1. first\n2. second\n"},
		{"links", "See [docs](https://x.example/docs), ![logo](l.png), <https://y.example>, www.z.example and [PMO](mailto:pmo@f.example).\n"},
		{"code and html", "```go\nfunc main() {\n\tprintln(1)\n}\n```\n\n    indented code\n\n<div class=\"note\">\n<b>Note:</b> html block\n</div>\n\nInline <span>html</span> here.\n"},
		{"blockquote", "> Risk: the export takes 14 hours.\n"},
		{"empty", "\n\n---\n"},
	} {
		inputs = append(inputs, struct {
			name string
			b    []byte
		}{tc.name, []byte(tc.src)})
	}
	limitSets := []extract.Limits{{MaxSectionChars: 40}, {}, {MaxSectionChars: 40, MaxPages: 5}}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			path := extracttest.WriteTemp(t, "in.md", in.b)
			for _, limits := range limitSets {
				want, wantErr := wholeExtract(context.Background(), path, limits)
				for _, target := range chunkTargets {
					for _, part := range []int{1, 5, 4096} {
						got, err := streamFile(context.Background(), path, limits, target, part)
						if fmt.Sprint(err) != fmt.Sprint(wantErr) || steperr.Name(err) != steperr.Name(wantErr) {
							t.Fatalf("target %d, part %d: err = %v, want %v", target, part, err, wantErr)
						}
						if d := extracttest.DiffUnits(got, want); d != "" {
							t.Fatalf("target %d, part %d, limits %+v: %s", target, part, limits, d)
						}
					}
				}
				got, err := Extract(context.Background(), path, limits)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Fatalf("Extract: err = %v, want %v", err, wantErr)
				}
				if d := extracttest.DiffUnits(got, want); d != "" {
					t.Fatalf("Extract, limits %+v: %s", limits, d)
				}
			}
		})
	}
}

// The test documents do resolve references across chunks: were the
// definitions not gathered, the text would differ.
func TestReferencesResolveAcrossChunks(t *testing.T) {
	t.Parallel()
	src := "Use [early] and [late].\n\n" + strings.Repeat("Filler paragraph.\n\n", 20) +
		"[late]: mailto:late@x.example\n\n" + strings.Repeat("More filler.\n\n", 20) + "[early]: mailto:early@x.example\n"
	us, err := streamString(context.Background(), src, extract.Limits{}, 16, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(us) == 0 || !strings.HasPrefix(us[0].Text, "Use early (early@x.example) and late (late@x.example).") {
		t.Fatalf("units: %q", texts(us))
	}
	if n := len(chunksOf(t, src, 16)); n < 20 {
		t.Fatalf("%d chunks: the document was not cut", n)
	}
}

// Definitions past maxRefBytes fail the document as too large.
func TestReferencesBounded(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	title := strings.Repeat("a long title ", 20)
	for i := 0; sb.Len() < 2*maxRefBytes; i++ {
		fmt.Fprintf(&sb, "[label %d]: https://x.example/%d \"%s\"\n\n", i, i, title)
	}
	_, err := ExtractString(context.Background(), "Text.\n\n"+sb.String(), extract.Limits{})
	if steperr.Name(err) != steperr.NameTooLarge {
		t.Fatalf("err = %v, want TooLarge", err)
	}
	// Under the bound, the same definitions are fine.
	few := sb.String()[:maxRefBytes/4]
	few = few[:strings.LastIndexByte(few, '\n')+1]
	if _, err := ExtractString(context.Background(), "Text [label 3].\n\n"+few, extract.Limits{}); err != nil {
		t.Fatal(err)
	}
}

func TestStreamCancelled(t *testing.T) {
	t.Parallel()
	path := extracttest.WriteTemp(t, "in.md", []byte(mixedMarkdown(64)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Stream(ctx, path, extract.Limits{}, func(extract.Unit) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: err = %v", err)
	}
	// Cancelled while it streams: it stops with the context's error.
	for _, target := range []int{1, 64, chunkBytes} {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		units := 0
		_, err := stream(ctx, mustOpen(t, path), extract.Limits{MaxSectionChars: 40}, target, func(extract.Unit) error {
			if units++; units == 3 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("target %d: cancelled while streaming: err = %v after %d units", target, err, units)
		}
	}
}

func TestStreamEmitErrorStops(t *testing.T) {
	t.Parallel()
	path := extracttest.WriteTemp(t, "in.md", []byte(mixedMarkdown(64)))
	stop := errors.New("stop")
	for _, target := range []int{1, 64, chunkBytes} {
		units := 0
		n, err := stream(context.Background(), mustOpen(t, path), extract.Limits{MaxSectionChars: 40}, target, func(extract.Unit) error {
			units++
			if units == 2 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || n != 0 || units != 2 {
			t.Fatalf("target %d: n, err = %d, %v after %d units; want the emit error after 2", target, n, err, units)
		}
	}
}

func mustOpen(t *testing.T, path string) *plaintext.TextReader {
	t.Helper()
	r, err := plaintext.OpenText(context.Background(), path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}
