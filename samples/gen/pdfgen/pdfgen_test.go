package pdfgen

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ledongthuc/pdf"
)

func generate(t *testing.T, opts Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, opts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	a := generate(t, Options{Pages: 5, Seed: 9})
	b := generate(t, Options{Pages: 5, Seed: 9})
	c := generate(t, Options{Pages: 5, Seed: 10})
	if !bytes.Equal(a, b) {
		t.Error("same seed, different bytes")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds, same bytes")
	}
}

// Every xref entry must point at the object it names.
func TestXrefOffsets(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{Pages: 3}, {Pages: 70, ImagePages: 5, Encrypt: &Encryption{Method: AES_128}}} {
		data := generate(t, opts)
		m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(data)
		if m == nil {
			t.Fatal("no startxref at the end")
		}
		xref, _ := strconv.Atoi(string(m[1]))
		lines := strings.Split(string(data[xref:]), "\n")
		if lines[0] != "xref" {
			t.Fatalf("startxref points at %q", lines[0])
		}
		var size int
		fmt.Sscanf(lines[1], "0 %d", &size)
		for i := 1; i < size; i++ {
			off, _ := strconv.Atoi(lines[2+i][:10])
			if want := fmt.Sprintf("%d 0 obj\n", i); !bytes.HasPrefix(data[off:], []byte(want)) {
				t.Fatalf("object %d: offset %d points at %.20q", i, off, data[off:])
			}
		}
	}
}

// A multi-level page tree (more than fanout² pages) reads back in order.
func TestPageTreeAndText(t *testing.T) {
	t.Parallel()
	const pages = fanout*fanout + 40
	texts := map[int]string{}
	opts := Options{Pages: pages, Seed: 4, ImagePages: 7, Uncompressed: true, PageText: func(p int, s string) { texts[p] = s }}
	data := generate(t, opts)
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := r.NumPage(); n != pages {
		t.Fatalf("NumPage = %d", n)
	}
	images := 0
	for _, p := range []int{1, 2, fanout, fanout + 1, fanout * fanout, pages} {
		content := r.Page(p).Content()
		if opts.IsImagePage(p) {
			if len(content.Text) != 0 {
				t.Errorf("image page %d has text", p)
			}
			continue
		}
		var b strings.Builder
		for _, g := range content.Text {
			b.WriteString(g.S)
		}
		// The library glues words; compare without spaces.
		got := strings.Join(strings.Fields(b.String()), "")
		want := strings.Join(strings.Fields(texts[p]), "")
		if got != want {
			t.Errorf("page %d text:\n got %.200q\nwant %.200q", p, got, want)
		}
		if !strings.Contains(texts[p], fmt.Sprintf("Page %d of %d", p, pages)) {
			t.Errorf("page %d lacks its footer", p)
		}
	}
	for p := 1; p <= pages; p++ {
		if opts.IsImagePage(p) {
			images++
		}
	}
	if images != 7 {
		t.Errorf("%d image pages, want 7", images)
	}
}

func TestTruncateAndLies(t *testing.T) {
	t.Parallel()
	if n := len(generate(t, Options{Pages: 4, TruncateAt: 1234})); n != 1234 {
		t.Errorf("truncated length %d", n)
	}
	if !bytes.Contains(generate(t, Options{Pages: 4, ClaimedCount: 99}), []byte("/Count 99")) {
		t.Error("claimed count missing")
	}
	if !regexp.MustCompile(`2 0 obj\n<< /Type /Pages /Kids \[[^\]]* 2 0 R\]`).Match(generate(t, Options{Pages: 4, CyclicPageTree: true})) {
		t.Error("root does not list itself")
	}
	if err := Write(&bytes.Buffer{}, Options{}); err == nil {
		t.Error("zero pages accepted")
	}
}

// The library checks the user password entry; a wrong encryption setup
// fails to open with the empty password.
func TestEncryptionOpens(t *testing.T) {
	t.Parallel()
	for _, m := range []Method{RC4_40, RC4_128, AES_128} {
		data := generate(t, Options{Pages: 1, Encrypt: &Encryption{Method: m}})
		if _, err := pdf.NewReader(bytes.NewReader(data), int64(len(data))); err != nil {
			t.Errorf("%v: %v", m, err)
		}
		data = generate(t, Options{Pages: 1, Encrypt: &Encryption{Method: m, UserPassword: "pw"}})
		if _, err := pdf.NewReader(bytes.NewReader(data), int64(len(data))); err != pdf.ErrInvalidPassword {
			t.Errorf("%v with password: %v", m, err)
		}
		pw := "pw"
		if _, err := pdf.NewReaderEncrypted(bytes.NewReader(data), int64(len(data)), func() string { s := pw; pw = ""; return s }); err != nil {
			t.Errorf("%v opened with its password: %v", m, err)
		}
	}
	if err := Write(&bytes.Buffer{}, Options{Pages: 1, Encrypt: &Encryption{Method: 99}}); err == nil {
		t.Error("unknown method accepted")
	}
}

func BenchmarkWrite(b *testing.B) {
	for b.Loop() {
		var n countWriter
		if err := Write(&n, Options{Pages: 1000}); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(n))
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
