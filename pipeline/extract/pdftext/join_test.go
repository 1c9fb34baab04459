package pdftext

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

func needPoppler(t *testing.T) {
	t.Helper()
	if !PopplerAvailable() {
		t.Skip("pdftotext/pdfinfo not installed")
	}
	if _, err := exec.LookPath("pdfunite"); err != nil {
		t.Skip("pdfunite not installed")
	}
}

// smallPDFs returns small documents of several producers: pdfgen, and
// groff when installed.
func smallPDFs(t *testing.T) []string {
	t.Helper()
	var paths []string
	for seed := range uint64(6) {
		path, _ := generate(t, pdfgen.Options{Pages: 1 + int(seed%3), Seed: 40 + seed, ImagePages: int(seed % 2)})
		paths = append(paths, path)
	}
	if _, err := exec.LookPath("groff"); err == nil {
		for i := range 3 {
			cmd := exec.Command("groff", "-ms", "-Tpdf")
			cmd.Stdin = strings.NewReader(fmt.Sprintf(".TL\nNote %d\n.PP\nThe committee met on day %d and agreed on the budget.\n.bp\n.PP\nA second page.\n", i, i))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil && i == 0 && strings.Contains(stderr.String(), "invalid device") {
				// groff-base alone has no PDF device (Debian's groff package does).
				t.Logf("groff has no PDF device (%s): only pdfgen documents joined", strings.TrimSpace(stderr.String()))
				break
			}
			if err != nil {
				t.Fatalf("groff: %v: %s", err, stderr.String())
			}
			path := filepath.Join(t.TempDir(), "groff.pdf")
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
		}
	} else {
		t.Log("groff not installed: only pdfgen documents joined")
	}
	return paths
}

func aloneUnits(t *testing.T, x *Poppler, path string, pages int) ([]extract.Unit, error) {
	t.Helper()
	var us []extract.Unit
	err := x.extractRanges(context.Background(), path, pages, extract.Limits{}.WithDefaults(), func(u extract.Unit) error {
		us = append(us, u)
		return nil
	})
	return us, err
}

func pageCount(t *testing.T, x *Poppler, path string) int {
	t.Helper()
	n, err := x.Pages(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Joined documents get the very pages each gets on its own.
func TestJoinedMatchesAlone(t *testing.T) {
	t.Parallel()
	needPoppler(t)
	x := NewPoppler()
	var docs []*smallDoc
	for _, path := range smallPDFs(t) {
		n := pageCount(t, x, path)
		if !joinable(path, n) {
			t.Fatalf("%s is not joinable", path)
		}
		docs = append(docs, &smallDoc{ctx: context.Background(), path: path, pages: n, limits: extract.Limits{}.WithDefaults(), done: make(chan struct{})})
	}
	if err := x.extractJoined(docs); err != nil {
		t.Fatalf("joined: %v", err)
	}
	for _, d := range docs {
		want, err := aloneUnits(t, x, d.path, d.pages)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.units) != len(want) {
			t.Fatalf("%s: %d pages joined, %d alone", d.path, len(d.units), len(want))
		}
		for i := range want {
			if d.units[i] != want[i] {
				t.Errorf("%s page %d: joined %q, alone %q", d.path, i+1, d.units[i].Text, want[i].Text)
			}
		}
	}
}

// A group whose joined run fails (a damaged document, a wrong count) gives
// every document what it gets on its own: the others their pages, the
// culprit its own error.
func TestJoinedGroupFallsBackToAlone(t *testing.T) {
	t.Parallel()
	needPoppler(t)
	x := NewPoppler()
	good, _ := generate(t, pdfgen.Options{Pages: 2, Seed: 50})
	truncated := filepath.Join("testdata", "truncated.pdf")
	for _, culprit := range []struct {
		path  string
		pages int
	}{{truncated, 4}, {good, 3}} {
		docs := []*smallDoc{
			{ctx: context.Background(), path: good, pages: 2},
			{ctx: context.Background(), path: culprit.path, pages: culprit.pages},
			{ctx: context.Background(), path: good, pages: 2},
		}
		for _, d := range docs {
			d.limits, d.done = extract.Limits{}.WithDefaults(), make(chan struct{})
		}
		if err := x.extractJoined(docs); err == nil {
			t.Fatalf("%s counted as %d pages: joined run did not fail", culprit.path, culprit.pages)
		}
		x.extractGroup(docs)
		for i, d := range docs {
			<-d.done
			if i == 1 {
				wantErr[*steperr.InvalidDocumentError](t, d.err)
				continue
			}
			if d.err != nil || len(d.units) != 2 {
				t.Fatalf("good document beside %s: %d pages, %v", culprit.path, len(d.units), d.err)
			}
		}
	}
}

func TestJoinable(t *testing.T) {
	t.Parallel()
	write := func(body string) string {
		path := filepath.Join(t.TempDir(), "doc.pdf")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	plain := "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
	compressed := "4 0 obj << /Length 20 >>\nstream\n/Encrypt /a#20b /ObjStm\nendstream endobj\n"
	for _, c := range []struct {
		name  string
		body  string
		pages int
		want  bool
	}{
		{"plain", plain, 1, true},
		{"keys inside a stream's body", plain + compressed, 1, true},
		{"a string that says stream", plain + "(upstream)\n/Encrypt 5 0 R\n", 1, false},
		{"encrypted", plain + "trailer << /Encrypt 5 0 R >>", 1, false},
		{"optional content", plain + "<< /OCProperties 6 0 R >>", 1, false},
		{"form", plain + "<< /AcroForm 6 0 R >>", 1, false},
		{"object stream", plain + "<< /Type /ObjStm >>", 1, false},
		{"escaped name", plain + "<< /OCPr#6Fperties 6 0 R >>", 1, false},
		{"a # outside names", plain + "(issue #5) % note #2\n", 1, true},
		{"after a stream", plain + compressed + "<< /AcroForm 6 0 R >>", 1, false},
		{"too many pages", plain, joinMaxPages + 1, false},
		{"too large", plain + strings.Repeat(" ", countInProcessMaxBytes), 1, false},
	} {
		if got := joinable(write(c.body), c.pages); got != c.want {
			t.Errorf("%s: joinable = %v, want %v", c.name, got, c.want)
		}
	}
	if joinable(filepath.Join(t.TempDir(), "missing.pdf"), 1) {
		t.Error("a missing file is joinable")
	}
}

// Documents that arrive while every slot runs are run together next, in
// groups of at most most, never more groups at once than slots.
func TestSmallDocsGroupsWhatWaits(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		groups  []int
		running int
		peak    int
		started = make(chan struct{}, 16)
		release = make(chan struct{})
	)
	var s smallDocs
	s.init(2, 4, func(group []*smallDoc) {
		mu.Lock()
		groups = append(groups, len(group))
		running++
		peak = max(peak, running)
		mu.Unlock()
		started <- struct{}{}
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		for _, d := range group {
			close(d.done)
		}
	})
	submit := func() *smallDoc {
		d := &smallDoc{done: make(chan struct{})}
		s.submit(d)
		return d
	}
	// Both slots taken, by one document each.
	docs := []*smallDoc{submit()}
	<-started
	docs = append(docs, submit())
	<-started
	for range 9 {
		docs = append(docs, submit())
	}
	close(release)
	for _, d := range docs {
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			t.Fatal("a document was never run")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > 2 {
		t.Errorf("%d groups ran at once, slots are 2", peak)
	}
	total := 0
	for _, n := range groups[2:] {
		if n > 4 {
			t.Errorf("group of %d, at most 4", n)
		}
		total += n
	}
	if total != 9 || len(groups) != 5 {
		t.Errorf("groups %v: want the 9 waiting documents in three groups after the first two", groups)
	}
}

// Many small documents extracted at once each get their own pages.
func TestPopplerConcurrentSmallDocuments(t *testing.T) {
	t.Parallel()
	needPoppler(t)
	x := &Poppler{Parallel: 1}
	paths := smallPDFs(t)
	want := make([][]extract.Unit, len(paths))
	counts := make([]int, len(paths))
	for i, path := range paths {
		counts[i] = pageCount(t, x, path)
		var err error
		if want[i], err = aloneUnits(t, x, path, counts[i]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for round := range 4 {
		for i, path := range paths {
			wg.Go(func() {
				got, err := extract.Collect(context.Background(), func(ctx context.Context, path string, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
					return x.StreamCountedPages(ctx, path, counts[i], limits, emit)
				}, path, extract.Limits{})
				if err != nil {
					t.Errorf("round %d, %s: %v", round, path, err)
					return
				}
				if len(got) != len(want[i]) {
					t.Errorf("round %d, %s: %d pages, want %d", round, path, len(got), len(want[i]))
					return
				}
				for p := range got {
					if got[p] != want[i][p] {
						t.Errorf("round %d, %s page %d: %q, want %q", round, path, p+1, got[p].Text, want[i][p].Text)
					}
				}
			})
		}
	}
	wg.Wait()
}

// BenchmarkSmallDocuments extracts 64 one-page documents at once, as a
// run of many small files does, with each backend: poppler's documents
// share their processes.
func BenchmarkSmallDocuments(b *testing.B) {
	paths := make([]string, 64)
	for i := range paths {
		paths[i] = filepath.Join(b.TempDir(), "doc.pdf")
		if err := pdfgen.WriteFile(paths[i], pdfgen.Options{Pages: 1, Seed: uint64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	xs := map[string]extract.PDFExtractor{"go": NewPureGo()}
	if PopplerAvailable() {
		xs["poppler"] = NewPoppler()
	}
	for name, x := range xs {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				var wg sync.WaitGroup
				for _, path := range paths {
					wg.Go(func() {
						if us, err := x.Extract(context.Background(), path, extract.Limits{}); err != nil || len(us) != 1 {
							b.Errorf("%d units, %v", len(us), err)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(len(paths)*b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}
