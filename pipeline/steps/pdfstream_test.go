package steps

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// Pages arriving out of order give the sample pages in order give, and
// nothing is kept once the sample is full.
func TestLanguageSampleOrdersPages(t *testing.T) {
	german := "Der schnelle braune Fuchs springt über den faulen Hund und die Katze schläft im Garten. "
	english := "The quick brown fox jumps over the lazy dog while the cat sleeps in the garden. "
	var pages []extract.Unit
	for i := 1; i <= 400; i++ {
		text := strings.Repeat(german, 3)
		if i > 200 {
			text = strings.Repeat(english, 3)
		}
		pages = append(pages, extract.Unit{Index: i, Kind: "page", Text: fmt.Sprintf("%d %s", i, text)})
	}
	want := detectLanguage(pages)
	if want == "" {
		t.Fatal("no language detected in order")
	}
	l := newLanguageSample()
	for _, i := range []int{201, 350, 2, 1} { // the second range starts first
		l.add(pages[i-1])
	}
	for _, p := range pages[2:] {
		l.add(p)
	}
	if got := l.detect(); got != want {
		t.Errorf("out of order: %q, in order: %q", got, want)
	}
	if !l.full() || len(l.waiting) != 0 || len(l.head) >= 200 {
		t.Errorf("sample full=%v, %d pages waiting, %d in head", l.full(), len(l.waiting), len(l.head))
	}
}
