package pdftext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// backends returns the extractors to run a conformance test against.
func backends(t *testing.T) map[string]extract.PDFExtractor {
	t.Helper()
	bs := map[string]extract.PDFExtractor{"go": NewPureGo()}
	if PopplerAvailable() {
		bs["poppler"] = NewPoppler()
	} else {
		t.Log("pdftotext/pdfinfo not installed: poppler backend not tested")
	}
	return bs
}

// generate writes a PDF to a temp dir and returns its path and page texts.
func generate(t testing.TB, opts pdfgen.Options) (string, []string) {
	t.Helper()
	texts := make([]string, opts.Pages)
	opts.PageText = func(p int, s string) { texts[p-1] = s }
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := pdfgen.WriteFile(path, opts); err != nil {
		t.Fatal(err)
	}
	return path, texts
}

// agreement is the share of words two texts have in common, counted as
// multisets: |A ∩ B| / max(|A|, |B|). Word order is not compared.
func agreement(a, b string) float64 {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa) == 0 && len(wb) == 0 {
		return 1
	}
	count := map[string]int{}
	for _, w := range wa {
		count[w]++
	}
	common := 0
	for _, w := range wb {
		if count[w] > 0 {
			count[w]--
			common++
		}
	}
	return float64(common) / float64(max(len(wa), len(wb)))
}

func joinUnits(us []extract.Unit) string {
	var b strings.Builder
	for _, u := range us {
		b.WriteString(u.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

func wantErr[T error](t *testing.T, err error) {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("error = %v (%T), want %T", err, err, target)
	}
}

func TestExtractMatchesDrawnText(t *testing.T) {
	t.Parallel()
	opts := pdfgen.Options{Pages: 8, Seed: 7, ImagePages: 2}
	path, texts := generate(t, opts)
	for name, x := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			n, err := x.Pages(ctx, path)
			if err != nil || n != 8 {
				t.Fatalf("Pages = %d, %v; want 8", n, err)
			}
			us, err := x.Extract(ctx, path, extract.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(us) != 8 {
				t.Fatalf("got %d units, want 8", len(us))
			}
			for i, u := range us {
				if u.Index != i+1 || u.Kind != "page" {
					t.Errorf("unit %d: index %d kind %q", i, u.Index, u.Kind)
				}
				if opts.IsImagePage(i + 1) {
					if !u.NeedsOCR || u.Text != "" {
						t.Errorf("image page %d: NeedsOCR=%v text=%q", i+1, u.NeedsOCR, u.Text)
					}
					continue
				}
				if u.NeedsOCR {
					t.Errorf("text page %d flagged for OCR", i+1)
				}
				if a := agreement(texts[i], u.Text); a < 0.99 {
					t.Errorf("page %d: word agreement with drawn text %.4f < 0.99\nwant: %.300q\ngot:  %.300q", i+1, a, texts[i], u.Text)
				}
			}
		})
	}
}

func TestWordAgreementWithPoppler(t *testing.T) {
	t.Parallel()
	if !PopplerAvailable() {
		t.Skip("pdftotext/pdfinfo not installed: cannot compare the pure-Go backend with poppler")
	}
	path, _ := generate(t, pdfgen.Options{Pages: 40, Seed: 3})
	ctx := context.Background()
	ref, err := NewPoppler().Extract(ctx, path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewPureGo().Extract(ctx, path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ref) {
		t.Fatalf("pure Go returned %d pages, poppler %d", len(got), len(ref))
	}
	a := agreement(joinUnits(ref), joinUnits(got))
	t.Logf("word agreement pure Go vs pdftotext: %.4f%%", 100*a)
	if a < 0.99 {
		t.Fatalf("word agreement %.4f < 0.99", a)
	}
}

func TestEncryptedWithEmptyUserPassword(t *testing.T) {
	t.Parallel()
	docs := map[string]func() (string, []string){
		"AES-256-R5": func() (string, []string) { return generateAES256(t, pdfgen.Options{Pages: 3, Seed: 11}, "", 5) },
		"AES-256-R6": func() (string, []string) { return generateAES256(t, pdfgen.Options{Pages: 3, Seed: 11}, "", 6) },
	}
	for _, m := range []pdfgen.Method{pdfgen.RC4_40, pdfgen.RC4_128, pdfgen.AES_128} {
		docs[m.String()] = func() (string, []string) {
			return generate(t, pdfgen.Options{Pages: 3, Seed: 11, Encrypt: &pdfgen.Encryption{Method: m}})
		}
	}
	for method, doc := range docs {
		path, texts := doc()
		for name, x := range backends(t) {
			t.Run(method+"/"+name, func(t *testing.T) {
				t.Parallel()
				us, err := x.Extract(context.Background(), path, extract.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if len(us) != len(texts) {
					t.Fatalf("got %d units, want %d", len(us), len(texts))
				}
				if a := agreement(strings.Join(texts, "\n"), joinUnits(us)); a < 0.99 {
					t.Fatalf("word agreement %.4f < 0.99:\n%.300q", a, joinUnits(us))
				}
			})
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	password, _ := generate(t, pdfgen.Options{Pages: 2, Encrypt: &pdfgen.Encryption{Method: pdfgen.RC4_128, UserPassword: "secret"}})
	passwordAES, _ := generate(t, pdfgen.Options{Pages: 2, Encrypt: &pdfgen.Encryption{Method: pdfgen.AES_128, UserPassword: "secret"}})
	passwordRC440, _ := generate(t, pdfgen.Options{Pages: 2, Encrypt: &pdfgen.Encryption{Method: pdfgen.RC4_40, UserPassword: "secret"}})
	truncated, _ := generate(t, pdfgen.Options{Pages: 10, TruncateAt: 9000})
	big, _ := generate(t, pdfgen.Options{Pages: 12})
	notPDF := write("notpdf.pdf", []byte("this is plain text, not a PDF at all\n"))
	empty := write("empty.pdf", nil)
	missing := filepath.Join(dir, "missing.pdf")

	cases := []struct {
		name   string
		path   string
		limits extract.Limits
		check  func(*testing.T, error)
	}{
		{"password RC4", password, extract.Limits{}, wantErr[*steperr.PasswordProtectedError]},
		{"password AES", passwordAES, extract.Limits{}, wantErr[*steperr.PasswordProtectedError]},
		{"password RC4-40", passwordRC440, extract.Limits{}, wantErr[*steperr.PasswordProtectedError]},
		{"truncated", truncated, extract.Limits{}, wantErr[*steperr.InvalidDocumentError]},
		{"not a PDF", notPDF, extract.Limits{}, wantErr[*steperr.InvalidDocumentError]},
		{"empty", empty, extract.Limits{}, wantErr[*steperr.InvalidDocumentError]},
		{"missing", missing, extract.Limits{}, wantErr[*steperr.InvalidDocumentError]},
		{"too many pages", big, extract.Limits{MaxPages: 10}, wantErr[*steperr.TooLargeError]},
	}
	for name, x := range backends(t) {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				_, err := x.Extract(context.Background(), c.path, c.limits)
				c.check(t, err)
			})
		}
	}
}

func TestCyclicPageTree(t *testing.T) {
	t.Parallel()
	for _, pages := range []int{5, 40} {
		path, texts := generate(t, pdfgen.Options{Pages: pages, CyclicPageTree: true})
		for name, x := range backends(t) {
			t.Run(fmt.Sprint(name, pages), func(t *testing.T) {
				t.Parallel()
				us, err := x.Extract(context.Background(), path, extract.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if len(us) != pages {
					t.Fatalf("got %d pages, want %d", len(us), pages)
				}
				if a := agreement(strings.Join(texts, "\n"), joinUnits(us)); a < 0.99 {
					t.Fatalf("word agreement %.4f", a)
				}
			})
		}
	}
}

// The pure-Go backend counts the page tree's leaves; a lying /Count
// neither hangs it nor changes the result.
func TestPureGoIgnoresLyingCount(t *testing.T) {
	t.Parallel()
	for _, claimed := range []int{3, 1_000_000} {
		path, _ := generate(t, pdfgen.Options{Pages: 10, ClaimedCount: claimed})
		x := NewPureGo()
		n, err := x.Pages(context.Background(), path)
		if err != nil || n != 10 {
			t.Fatalf("claimed %d: Pages = %d, %v; want 10", claimed, n, err)
		}
		us, err := x.Extract(context.Background(), path, extract.Limits{})
		if err != nil || len(us) != 10 {
			t.Fatalf("claimed %d: %d units, %v; want 10", claimed, len(us), err)
		}
	}
}

// Poppler trusts /Count: an impossible one is a damaged document.
func TestPopplerImpossibleCount(t *testing.T) {
	t.Parallel()
	if !PopplerAvailable() {
		t.Skip("pdftotext/pdfinfo not installed")
	}
	path, _ := generate(t, pdfgen.Options{Pages: 10, ClaimedCount: 1_000_000})
	_, err := NewPoppler().Extract(context.Background(), path, extract.Limits{})
	wantErr[*steperr.InvalidDocumentError](t, err)
}

func TestContext(t *testing.T) {
	t.Parallel()
	path, _ := generate(t, pdfgen.Options{Pages: 30})
	for name, x := range backends(t) {
		t.Run(name+"/canceled", func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := x.Extract(ctx, path, extract.Limits{})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error = %v, want context.Canceled", err)
			}
		})
	}
	// The backend's own timeout is a permanent "too large", not a retry.
	timeouts := map[string]extract.PDFExtractor{"go": &PureGo{Timeout: time.Nanosecond}}
	if PopplerAvailable() {
		timeouts["poppler"] = &Poppler{Timeout: time.Nanosecond}
	}
	for name, x := range timeouts {
		t.Run(name+"/timeout", func(t *testing.T) {
			t.Parallel()
			_, err := x.Extract(context.Background(), path, extract.Limits{})
			wantErr[*steperr.TooLargeError](t, err)
		})
	}
}

func TestPopplerMemoryLimit(t *testing.T) {
	t.Parallel()
	if !PopplerAvailable() {
		t.Skip("pdftotext/pdfinfo not installed")
	}
	path, _ := generate(t, pdfgen.Options{Pages: 3})
	// 4 MiB of address space cannot even map poppler's libraries.
	_, err := (&Poppler{MemoryLimit: 4 << 20}).Extract(context.Background(), path, extract.Limits{})
	wantErr[*steperr.TooLargeError](t, err)
}

func TestPopplerParallelRanges(t *testing.T) {
	t.Parallel()
	if !PopplerAvailable() {
		t.Skip("pdftotext/pdfinfo not installed")
	}
	path, texts := generate(t, pdfgen.Options{Pages: 25, Seed: 5, ImagePages: 3})
	one, err := (&Poppler{Parallel: 1}).Extract(context.Background(), path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	three, err := (&Poppler{Parallel: 3, MinPagesPerProcess: 5}).Extract(context.Background(), path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 25 || len(three) != 25 {
		t.Fatalf("got %d and %d units, want 25", len(one), len(three))
	}
	for i := range one {
		if one[i] != three[i] {
			t.Fatalf("page %d differs between one process and three ranges", i+1)
		}
		if a := agreement(texts[i], three[i].Text); a < 0.99 {
			t.Fatalf("page %d: agreement %.4f", i+1, a)
		}
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	for choice, want := range map[string]string{"go": "go", "auto": map[bool]string{true: "poppler", false: "go"}[PopplerAvailable()]} {
		x, err := New(choice)
		if err != nil || x.Name() != want {
			t.Errorf("New(%q) = %v, %v; want %s", choice, x, err, want)
		}
	}
	if _, err := New("poppler"); (err == nil) != PopplerAvailable() {
		t.Errorf("New(poppler) error = %v with poppler available = %v", err, PopplerAvailable())
	}
	if _, err := New("tesseract"); err == nil {
		t.Error("New(tesseract) succeeded")
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	exitErr := errors.New("exit status 1")
	cases := []struct {
		stderr string
		want   string
	}{
		{"Command Line Error: Incorrect password\n", steperr.NamePasswordProtected},
		{"Syntax Warning: May not be a PDF file (continuing anyway)\nSyntax Error: Couldn't find trailer dictionary\n", steperr.NameInvalidDocument},
		{"Syntax Error: Couldn't read xref table\n", steperr.NameInvalidDocument},
		{"terminate called after throwing an instance of 'std::bad_alloc'\n", steperr.NameTooLarge},
		{"", steperr.NameTransient}, // the tool did not start
	}
	for _, c := range cases {
		if got := steperr.Name(classify("pdftotext", c.stderr, exitErr)); got != c.want {
			t.Errorf("classify(%q) = %s, want %s", c.stderr, got, c.want)
		}
	}
	// pdftotext runs quiet: a PDF it cannot open may leave nothing on
	// stderr, and the reason must still say something.
	exit1 := exec.Command("sh", "-c", "exit 1").Run()
	err := classify("pdftotext", "", exit1)
	if steperr.Name(err) != steperr.NameInvalidDocument || !strings.HasSuffix(err.Error(), "damaged or not a PDF") {
		t.Errorf("classify of a silent exit 1 = %s %q, want an invalid document saying why", steperr.Name(err), err)
	}
}

// A reason names each of the tool's last messages once, in order.
func TestLastLinesSaysEachMessageOnce(t *testing.T) {
	t.Parallel()
	stderr := "Syntax Error: a\n\nSyntax Error: Couldn't find trailer dictionary\nSyntax Error: Couldn't find trailer dictionary\n  Syntax Error: Couldn't read xref table \n"
	want := "Syntax Error: a; Syntax Error: Couldn't find trailer dictionary; Syntax Error: Couldn't read xref table"
	if got := lastLines(stderr, 3); got != want {
		t.Errorf("lastLines = %q, want %q", got, want)
	}
	if got := lastLines("one\ntwo\nthree\n", 2); got != "two; three" {
		t.Errorf("lastLines of three, keeping two = %q", got)
	}
	if got := lastLines(" \n\n", 3); got != "" {
		t.Errorf("lastLines of blank lines = %q, want empty", got)
	}
}

// A caller that counted the pages passes the count; a count that does not
// match the document fails the extraction rather than leaving pages out
// or inventing them.
func TestPopplerCountedPages(t *testing.T) {
	t.Parallel()
	if !PopplerAvailable() {
		t.Skip("pdftotext/pdfinfo not installed")
	}
	path, _ := generate(t, pdfgen.Options{Pages: 25, Seed: 7})
	x := &Poppler{Parallel: 3, MinPagesPerProcess: 5}
	want, err := x.Extract(context.Background(), path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	counted := func(pages int) ([]extract.Unit, error) {
		return extract.Collect(context.Background(), func(ctx context.Context, path string, limits extract.Limits, emit func(extract.Unit) error) (int, error) {
			return x.StreamCountedPages(ctx, path, pages, limits, emit)
		}, path, extract.Limits{})
	}
	got, err := counted(25)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d pages, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("page %d differs from the uncounted extraction", i+1)
		}
	}
	for _, wrong := range []int{20, 24, 26, 40} {
		if _, err := counted(wrong); err == nil {
			t.Errorf("counted as %d pages: no error for a 25-page document", wrong)
		} else {
			wantErr[*steperr.InvalidDocumentError](t, err)
		}
	}
	if _, err := counted(0); err == nil {
		t.Error("a count of 0: no error")
	}
}
