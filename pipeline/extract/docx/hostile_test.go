package docx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
	"github.com/docpipe/docpipe/samples/gen/hostile"
)

// One paragraph of 32 MB streams out in sections like many small ones,
// holding a bounded part of it: before paragraphs were capped, the whole
// paragraph was held, in several copies (the heap grew by 95 MB).
func TestStreamHugeParagraph(t *testing.T) {
	if raceEnabled {
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
