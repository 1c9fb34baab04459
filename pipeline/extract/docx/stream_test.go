package docx

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// streamRun is one run of stream, with what it emitted and whether the
// spill file existed when it emitted the first unit.
type streamRun struct {
	units   []extract.Unit
	n       int
	err     error
	spilled bool
}

// runStream streams path with the given spill threshold into a fresh
// directory, and fails the test if the spill file outlives the call.
func runStream(t *testing.T, ctx context.Context, path string, limits extract.Limits, threshold int, emit func(extract.Unit) error) streamRun {
	t.Helper()
	dir := t.TempDir()
	var r streamRun
	r.n, r.err = stream(ctx, path, limits, spillConfig{dir: dir, threshold: threshold}, func(u extract.Unit) error {
		if len(r.units) == 0 { // looking at every unit would be slow
			entries, _ := os.ReadDir(dir)
			r.spilled = len(entries) > 0
		}
		r.units = append(r.units, u)
		if emit != nil {
			return emit(u)
		}
		return nil
	})
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		t.Fatalf("spill directory after Stream: %v, %v", entries, err)
	}
	return r
}

// thresholds are the spill thresholds the comparisons run: the real one,
// one that spills before the first block, and one that spills part way.
var thresholds = []int{spillThreshold, 1, 100}

// compareWithOracle checks that stream gives what the slice-based
// extractor gives at every threshold: the same units, or the same error.
// It returns the oracle's units and error, and the runs at each threshold.
func compareWithOracle(t *testing.T, path string, limits extract.Limits) ([]extract.Unit, []streamRun, error) {
	t.Helper()
	want, wantErr := oracleExtract(context.Background(), path, limits)
	var runs []streamRun
	for _, th := range thresholds {
		r := runStream(t, context.Background(), path, limits, th, nil)
		runs = append(runs, r)
		if wantErr != nil {
			if r.err == nil || r.err.Error() != wantErr.Error() || steperr.Name(r.err) != steperr.Name(wantErr) {
				t.Fatalf("threshold %d: err = %v, want %v", th, r.err, wantErr)
			}
			continue
		}
		if r.err != nil {
			t.Fatalf("threshold %d: err = %v, want units %q", th, r.err, texts(want))
		}
		if !slices.Equal(r.units, want) || r.n != len(want) {
			t.Fatalf("threshold %d: %d units\n%q\nwant:\n%q", th, r.n, texts(r.units), texts(want))
		}
	}
	return want, runs, wantErr
}

func TestStreamMatchesOracleOnSamples(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"docs/report.docx", "bad/zipbomb.docx", "bad/truncated.docx", "bad/encrypted.docx", "bad/spreadsheet.xlsx"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, limits := range []extract.Limits{{}, {MaxSectionChars: 50}, {MaxPages: 2}, {MaxDecompressedBytes: 1 << 20}} {
				compareWithOracle(t, filepath.Join(samples, name), limits)
			}
		})
	}
}

// Page-break markup, as it appears in documents.
const (
	breakBefore  = `<w:p><w:pPr><w:pageBreakBefore/></w:pPr><w:r><w:t>after a break before</w:t></w:r></w:p>`
	noBreakOff   = `<w:p><w:pPr><w:pageBreakBefore w:val="0"/></w:pPr><w:r><w:t>no break before</w:t></w:r></w:p>`
	sectNextPage = `<w:p><w:pPr><w:sectPr><w:type w:val="nextPage"/></w:sectPr></w:pPr><w:r><w:t>section end</w:t></w:r></w:p>`
	sectDefault  = `<w:p><w:pPr><w:sectPr/></w:pPr></w:p>`
	sectCont     = `<w:p><w:pPr><w:sectPr><w:type w:val="continuous"/></w:sectPr></w:pPr><w:r><w:t>continuous</w:t></w:r></w:p>`
	midBreak     = `<w:p><w:r><w:t>before</w:t><w:br w:type="page"/><w:t>after</w:t></w:r></w:p>`
	cellBreak    = `<w:tbl><w:tr><w:tc><w:p><w:r><w:t>cell</w:t><w:br w:type="page"/><w:t>still cell</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`
)

func TestStreamMatchesOracleOnHandWritten(t *testing.T) {
	t.Parallel()
	long := p(strings.Repeat("wörd ", 40))
	bodies := map[string]string{
		"no breaks":               h("Title") + p("one") + p("two") + h("Next") + p("three"),
		"manual breaks":           p("a") + pageBreak + p("b") + midBreak + p("c"),
		"page break before":       p("a") + breakBefore + p("b") + noBreakOff,
		"section breaks":          p("a") + sectNextPage + p("b") + sectDefault + p("c") + sectCont + p("d"),
		"empty pages":             p("a") + pageBreak + pageBreak + sectDefault + breakBefore + pageBreak + p("b"),
		"leading and trailing":    pageBreak + breakBefore + p("a") + pageBreak + sectDefault,
		"only breaks":             pageBreak + pageBreak + sectDefault,
		"break in a cell ignored": p("a") + cellBreak + p("b"),
		"page over the slack":     p("a") + pageBreak + long + long + pageBreak + p("c"),
		"first page over slack":   long + long + long + pageBreak + p("b") + pageBreak + p("c"),
		"last page over slack":    p("a") + pageBreak + p("b") + pageBreak + long + long + long,
		"no breaks, long":         h("Head") + long + long + h("Again") + long + p("x"),
		"many pages":              strings.Repeat(p("x")+pageBreak, 10) + p("end"),
		"many pages, then long":   strings.Repeat(p("x")+pageBreak, 10) + long + long + long,
		"empty document":          `<w:sectPr/>`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := docxFile(t, body)
			for _, limits := range []extract.Limits{{}, {MaxSectionChars: 20}, {MaxSectionChars: 60}, {MaxPages: 3}, {MaxPages: 3, MaxSectionChars: 20}, {MaxPages: 1}} {
				compareWithOracle(t, path, limits)
			}
		})
	}
}

// A page of exactly pageSlack sections' characters, counting the blank
// line between its blocks and counting runes, not bytes, stays a page; one
// character more and the document falls back to sections.
func TestStreamPageSlackBoundary(t *testing.T) {
	t.Parallel()
	limits := extract.Limits{MaxSectionChars: 10} // pages of up to 40 runes
	a19 := strings.Repeat("a", 19)
	tests := []struct {
		name string
		page string
		kind string
	}{
		{"two blocks and a separator, 40", p(a19) + p(a19), "page"},
		{"two blocks and a separator, 41", p(a19) + p(a19+"a"), "section"},
		{"multibyte, 40 runes", p(strings.Repeat("é", 40)), "page"},
		{"multibyte, 41 runes", p(strings.Repeat("é", 41)), "section"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, body := range []string{p("x") + pageBreak + tc.page, tc.page + pageBreak + p("x")} {
				want, _, _ := compareWithOracle(t, docxFile(t, body), limits)
				if len(want) == 0 || want[0].Kind != tc.kind {
					t.Fatalf("units %q, want %ss", texts(want), tc.kind)
				}
			}
		})
	}
}

// Words of generated documents: some multibyte, so that rune and byte
// counts differ, and some long enough to be cut mid-word.
var words = []string{"the", "report", "ëlan", "日本語", "quarterly", "revenue", "a", "of", "Zürich", "supercalifragilisticexpialidocious", "$1,000", "—"}

// randomBody writes a document body of n blocks: paragraphs, headings,
// tables and every kind of page break in random order, breaks often enough
// that some documents come out as pages and some pages are over the slack.
func randomBody(r *rand.Rand, n int, breakRate int) string {
	var b strings.Builder
	sentence := func(max int) string {
		k := 1 + r.IntN(max)
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	for range n {
		if r.IntN(100) < breakRate {
			switch r.IntN(7) {
			case 0, 1:
				b.WriteString(pageBreak)
			case 2:
				fmt.Fprintf(&b, `<w:p><w:pPr><w:pageBreakBefore/></w:pPr><w:r><w:t>%s</w:t></w:r></w:p>`, sentence(8))
			case 3:
				fmt.Fprintf(&b, `<w:p><w:pPr><w:sectPr><w:type w:val="nextPage"/></w:sectPr></w:pPr><w:r><w:t>%s</w:t></w:r></w:p>`, sentence(5))
			case 4:
				b.WriteString(sectDefault)
			case 5:
				fmt.Fprintf(&b, `<w:p><w:r><w:t>%s</w:t><w:br w:type="page"/><w:t>%s</w:t></w:r></w:p>`, sentence(6), sentence(6))
			case 6:
				b.WriteString(sectCont)
			}
			continue
		}
		switch r.IntN(10) {
		case 0:
			b.WriteString(h(sentence(4)))
		case 1:
			fmt.Fprintf(&b, `<w:tbl><w:tr><w:tc>%s</w:tc><w:tc>%s</w:tc></w:tr><w:tr><w:tc>%s</w:tc><w:tc></w:tc></w:tr></w:tbl>`,
				p(sentence(3)), p(sentence(3)), p(sentence(3)))
		case 2:
			b.WriteString(`<w:p><w:r><w:t xml:space="preserve">   </w:t></w:r></w:p>`) // empty after cleaning
		case 3:
			fmt.Fprintf(&b, `<w:p><w:r><w:t>%s</w:t><w:br/><w:t>%s</w:t><w:tab/><w:t>%s</w:t></w:r></w:p>`, sentence(10), sentence(10), sentence(3))
		default:
			b.WriteString(p(sentence(40)))
		}
	}
	return b.String()
}

func TestStreamMatchesOracleOnGenerated(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	outcomes := map[string]int{}
	count := func(outcome string) {
		mu.Lock()
		defer mu.Unlock()
		outcomes[outcome]++
	}
	t.Cleanup(func() {
		t.Logf("outcomes: %v", outcomes)
		if outcomes["pages"] < 10 || outcomes["sections"] < 10 || outcomes["error"] < 3 {
			t.Errorf("the generated documents cover too few outcomes: %v", outcomes)
		}
	})
	seeds := 48
	if testing.Short() {
		seeds = 24 // every outcome still a dozen times or more
	}
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			breakRate := []int{0, 2, 10, 30}[seed%4]
			path := docxFile(t, randomBody(r, 20+r.IntN(250), breakRate))
			for _, limits := range []extract.Limits{{}, {MaxSectionChars: 100}, {MaxSectionChars: 400}, {MaxSectionChars: 400, MaxPages: 8}} {
				want, runs, err := compareWithOracle(t, path, limits)
				switch {
				case err != nil:
					count("error")
				case len(want) > 0 && want[0].Kind == "page":
					count("pages")
					// Pages are emitted from what was held, after the parse:
					// at threshold 1 that is the spill file.
					if !runs[1].spilled {
						t.Errorf("%+v: pages at threshold 1 without a spill file", limits)
					}
				case len(want) > 0:
					count("sections")
				}
			}
		})
	}
}

// pagesBody is a body of pages of about pageChars characters each, n of them.
func pagesBody(n, pageChars int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(pageBreak)
		}
		for w := 0; w < pageChars; w += 100 {
			b.WriteString(p(fmt.Sprintf("Paragraph %d of page %d. ", w/100, i) + strings.Repeat("x", 70)))
		}
	}
	return b.String()
}

// layoutBodies returns a document body in each layout Stream tells apart:
// pages, sections (size random blocks without breaks) and a fallback (a
// few pages, then size blocks after the last break), drawn from seed.
func layoutBodies(pages, size int, seed uint64) map[string]string {
	return map[string]string{
		"pages":    pagesBody(pages, 2000),
		"sections": randomBody(rand.New(rand.NewPCG(seed, seed+1)), size, 0),
		"fallback": pagesBody(3, 2000) + pageBreak + randomBody(rand.New(rand.NewPCG(seed+2, seed+3)), size, 0),
	}
}

// A cancelled context stops Stream with the context's error, whether it
// was cancelled before the start or while units were being emitted, in
// each layout and at each threshold; runStream checks that no spill file
// is left behind.
func TestStreamCancel(t *testing.T) {
	t.Parallel()
	for name, body := range layoutBodies(40, 4000, 1) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := docxFile(t, body)
			for _, th := range thresholds {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if r := runStream(t, ctx, path, extract.Limits{}, th, nil); !errors.Is(r.err, context.Canceled) || len(r.units) > 0 {
					t.Fatalf("threshold %d, cancelled before: %d units, err = %v", th, len(r.units), r.err)
				}
				ctx, cancel = context.WithCancel(context.Background())
				r := runStream(t, ctx, path, extract.Limits{}, th, func(u extract.Unit) error {
					if u.Index == 2 {
						cancel()
					}
					return nil
				})
				cancel()
				if !errors.Is(r.err, context.Canceled) {
					t.Fatalf("threshold %d, cancelled at unit 2: err = %v after %d units", th, r.err, len(r.units))
				}
				// Units already decoded may still come, but not the rest of
				// the document.
				all := runStream(t, context.Background(), path, extract.Limits{}, th, nil)
				if len(r.units) >= len(all.units) {
					t.Fatalf("threshold %d: %d units after cancelling, of %d", th, len(r.units), len(all.units))
				}
			}
		})
	}
}

// An error from emit stops Stream and comes back, with the count of the
// units emitted before it.
func TestStreamEmitError(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop")
	for name, body := range layoutBodies(20, 2000, 5) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := docxFile(t, body)
			for _, th := range thresholds {
				for _, at := range []int{1, 3} {
					r := runStream(t, context.Background(), path, extract.Limits{}, th, func(u extract.Unit) error {
						if u.Index == at {
							return stop
						}
						return nil
					})
					if !errors.Is(r.err, stop) || len(r.units) != at || r.n != at-1 {
						t.Fatalf("threshold %d, error at unit %d: err = %v, %d units emitted, n = %d", th, at, r.err, len(r.units), r.n)
					}
				}
			}
		})
	}
}

// A spill file that cannot be created is an error, not a silent loss of
// text.
func TestStreamSpillDirMissing(t *testing.T) {
	t.Parallel()
	path := docxFile(t, pagesBody(3, 500))
	dir := filepath.Join(t.TempDir(), "missing")
	_, err := stream(context.Background(), path, extract.Limits{}, spillConfig{dir: dir, threshold: 1}, func(extract.Unit) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "temp file") {
		t.Fatalf("err = %v, want one about the temp file", err)
	}
}
