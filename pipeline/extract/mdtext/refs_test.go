package mdtext

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/hostile"
)

// A run of more "]:" than a paragraph can take out in time (lines without
// a blank line between them) fails the document as too large before any
// parse: goldmark takes a run of definitions out of its paragraph in time
// quadratic in their number, and repeated definitions cost no bytes of
// maxRefBytes. As many definitions, and more, apart from each other read.
func TestRefRunsAreBounded(t *testing.T) {
	t.Parallel()
	run := int(math.Sqrt(maxRefWork))
	apart := "See [x][a].\n\n" + strings.Repeat("[a]: /u\n \t\n", 2*run)
	units, err := ExtractString(context.Background(), apart, extract.Limits{})
	if err != nil || len(units) != 1 || units[0].Text != "See x." {
		t.Fatalf("%d definitions apart: got %+v, %v; want the one line", 2*run, units, err)
	}
	_, err = ExtractString(context.Background(), "See [x][a].\n\n"+strings.Repeat("[a]: /u\n", run+1), extract.Limits{})
	if steperr.Name(err) != steperr.Name(&steperr.TooLargeError{}) {
		t.Fatalf("%d definitions in a run: got %v, want a too-large error", run+1, err)
	}
}

// refMarks counts a "]:" that parts cut in two, and the runs of lines
// whatever the parts.
func TestRefMarksAcrossParts(t *testing.T) {
	t.Parallel()
	src := "[a]: /u\n[b]\n: no\n[c]: /v\n"
	for part := 1; part <= len(src); part++ {
		n, err := refMarks(context.Background(), &stringSource{s: src, part: part})
		if err != nil || n != 2 {
			t.Fatalf("parts of %d: got %d, %v; want 2", part, n, err)
		}
	}
	run := int(math.Sqrt(maxRefWork))
	for _, part := range []int{7, 4096} {
		if _, err := refMarks(context.Background(), &stringSource{s: strings.Repeat("[a]: /u\n[b]: /v\n\n", run), part: part}); err != nil {
			t.Fatalf("parts of %d, runs of 2: %v", part, err)
		}
		_, err := refMarks(context.Background(), &stringSource{s: strings.Repeat("[a]: /u\n[b]: /v\n", run), part: part})
		if steperr.Name(err) != steperr.Name(&steperr.TooLargeError{}) {
			t.Fatalf("parts of %d, one run: got %v, want a too-large error", part, err)
		}
	}
}

// A million reference links and their definitions (80 MB), which ran for
// many minutes in goldmark before the "]:" were counted first.
func BenchmarkManyReferences(b *testing.B) {
	var src strings.Builder
	if err := hostile.MarkdownReferences(&src, 1_000_000); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(src.Len()))
	for b.Loop() {
		if _, err := ExtractString(context.Background(), src.String(), extract.Limits{}); steperr.Name(err) != steperr.Name(&steperr.TooLargeError{}) {
			b.Fatalf("got %v, want a too-large error", err)
		}
	}
}
