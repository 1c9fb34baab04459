package docx

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/docpipe/docpipe/internal/racebuild"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/hostile"
)

// One paragraph of 32 MB streams out in sections like many small ones,
// holding a bounded part of it: before paragraphs were capped, the whole
// paragraph was held, in several copies (the heap grew by 95 MB).
func TestStreamHugeParagraph(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("takes minutes under the race detector")
	}
	const size = 32 << 20
	path := filepath.Join(t.TempDir(), "paragraph.docx")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := hostile.DOCXHugeParagraph(f, size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := extracttest.MeasureStream(func(emit func(extract.Unit) error) (int, error) {
		return stream(context.Background(), path, extract.Limits{}, spillConfig{dir: t.TempDir(), threshold: spillThreshold}, emit)
	})
	if err != nil {
		t.Fatal(err)
	}
	st.CheckBounded(t, size, size/(8*extract.DefaultLimits.MaxSectionChars), size*9/10, 24<<20)
}

// A long paragraph is cut between words, and no text is lost.
func TestLongParagraphCutBetweenWords(t *testing.T) {
	word := "abcdefghi "
	var body []byte
	for len(body) < 3*maxParagraphBytes {
		body = append(body, word...)
	}
	var s oracleSink
	doc := `<w:document xmlns:w="` + nsW + `"><w:body>` + p(string(body)) + `</w:body></w:document>`
	if err := parse(strings.NewReader(doc), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.blocks) < 3 {
		t.Fatalf("%d blocks, want the paragraph cut in at least 3", len(s.blocks))
	}
	total := 0
	for _, blk := range s.blocks {
		b := blk.text
		if b[0] != 'a' || b[len(b)-1] != 'i' {
			t.Fatalf("block cut inside a word: %q...%q", b[:10], b[len(b)-10:])
		}
		total += len(b) + 1
	}
	if total != len(body) {
		t.Fatalf("blocks hold %d bytes, want %d", total, len(body))
	}
}

// nestedTables is a paragraph inside depth nested tables, each level three
// elements deep (w:tbl, w:tr, w:tc), wrapped in open and close.
func nestedTables(depth int, open, close string) string {
	return open + strings.Repeat("<w:tbl><w:tr><w:tc>", depth) + p("deep") +
		strings.Repeat("</w:tc></w:tr></w:tbl>", depth) + close
}

// Elements nested past maxElementDepth fail the document as too large, in
// a subtree the parser skips too: encoding/xml keeps every open element,
// so a million nested tables took 868 MB. A document just within the
// limit still reads.
func TestDeepNestingFailsTooLarge(t *testing.T) {
	t.Parallel()
	levels := maxElementDepth / 3
	for _, tc := range []struct{ name, open, close string }{
		{"body", "", ""},
		{"skipped", "<w:p><mc:AlternateContent><mc:Fallback>", "</mc:Fallback></mc:AlternateContent></w:p>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Extract(context.Background(), docxFile(t, nestedTables(levels, tc.open, tc.close)), extract.Limits{})
			if steperr.Name(err) != steperr.Name(&steperr.TooLargeError{}) {
				t.Fatalf("%d nested tables: got %v, want a too-large error", levels, err)
			}
		})
	}
	units, err := Extract(context.Background(), docxFile(t, nestedTables(levels-4, "", "")), extract.Limits{})
	if err != nil || len(units) != 1 || units[0].Text != "deep" {
		t.Fatalf("%d nested tables: got %v, %v; want the one word", levels-4, units, err)
	}
}

// A text node longer than maxTextRunBytes fails as too large rather than
// be held whole by the XML decoder.
func TestHugeTextRunFailsTooLarge(t *testing.T) {
	t.Parallel()
	doc := io.MultiReader(
		strings.NewReader(`<w:document xmlns:w="`+nsW+`"><w:body><w:p><w:r><w:t>`),
		io.LimitReader(neverEnding('a'), maxTextRunBytes+1),
		strings.NewReader(`</w:t></w:r></w:p></w:body></w:document>`))
	err := parse(doc, &oracleSink{})
	if steperr.Name(err) != steperr.Name(&steperr.TooLargeError{}) {
		t.Fatalf("got %v, want a too-large error", err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// markupGapReader counts the bytes between '<'s across reads: exactly max
// of them pass, one more fails.
func TestMarkupGapReader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		fail bool
	}{
		{"abcd<abcd<", false},
		{"<abcd", false},
		{"ab<abcde", true},
		{"abcde<", true},
	} {
		_, err := io.ReadAll(&markupGapReader{r: iotest.OneByteReader(strings.NewReader(tc.in)), max: 4})
		if failed := steperr.Name(err) == steperr.Name(&steperr.TooLargeError{}); failed != tc.fail || (err != nil && !failed) {
			t.Errorf("%q: got %v, want too large: %v", tc.in, err, tc.fail)
		}
	}
}
