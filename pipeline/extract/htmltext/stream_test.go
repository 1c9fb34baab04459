package htmltext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// bothPaths extracts a page with the tree parser and with the streaming
// builder, and returns the units of each as one string.
func bothPaths(t *testing.T, page []byte, limits extract.Limits) (tree, stream string) {
	t.Helper()
	src := &source{mem: page, size: int64(len(page))}
	if err := src.detect(); err != nil {
		t.Fatal(err)
	}
	if _, err := html.Parse(bytes.NewReader(src.decoded())); err != nil {
		t.Fatalf("the tree parser refuses the page: %v", err)
	}
	tu, err := extractTree(context.Background(), src, limits)
	if err != nil {
		t.Fatal(err)
	}
	su, err := extractStream(context.Background(), src, limits)
	if err != nil {
		t.Fatal(err)
	}
	return joinUnits(tu), joinUnits(su)
}

func joinUnits(us []extract.Unit) string {
	var b strings.Builder
	for _, u := range us {
		fmt.Fprintf(&b, "--- %d %s\n%s\n", u.Index, u.Kind, u.Text)
	}
	return b.String()
}

// TestStreamMatchesTree runs both paths over every page the package's
// tests use and over pages shaped like messy real-world HTML (testdata),
// and requires the same units.
func TestStreamMatchesTree(t *testing.T) {
	t.Parallel()
	type page struct {
		src    []byte
		limits extract.Limits
	}
	pages := map[string]page{}
	for _, tc := range extractCases {
		pages["case/"+tc.name] = page{[]byte(tc.src), tc.limits}
	}
	files, err := filepath.Glob("testdata/*.html")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(samples, "docs/page.html"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages[f] = page{src: b}
		pages[f+"/short sections"] = page{b, extract.Limits{MaxSectionChars: 60}}
	}
	var flat strings.Builder
	flat.WriteString("<html><body>")
	for i := range 20000 {
		fmt.Fprintf(&flat, "<p>w%d</p>", i)
	}
	pages["flat elements"] = page{src: []byte(flat.String())}
	for name, write := range map[string]func(string, int) error{"generated flat": writeFlat, "generated nested": writeNested} {
		path := filepath.Join(t.TempDir(), "page.html")
		if err := write(path, 256<<10); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pages[name] = page{src: b}
	}
	for name, p := range pages {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tree, stream := bothPaths(t, p.src, p.limits)
			if tree != stream {
				t.Errorf("tree path:\n%s\nstreaming path:\n%s", tree, stream)
			}
		})
	}
}

// tagSoup is what random pages are made of: tags of every kind the rules
// or the parser treat specially, and text.
var tagSoup = []string{
	"<p>", "</p>", "<li>", "</li>", "<ul>", "</ul>", "<ol>", "</ol>", "<dl>", "<dt>", "<dd>", "</dl>",
	"<table>", "</table>", "<tr>", "</tr>", "<td>", "</td>", "<th>", "<tbody>", "</tbody>", "<thead>", "<tfoot>",
	"<caption>", "</caption>", "<colgroup><col>", "<div>", "</div>", "<span>", "</span>", "<section>", "</section>",
	"<b>", "</b>", "<i>", "</i>", "<em>", "</em>", "<strong>", "</strong>", "<u>", "<nobr>", "<font color=red>", "</font>",
	`<a href="mailto:x@y.example">`, `<A HREF="MAILTO:Z@Y.EXAMPLE">`, `<a href="/q">`, "</a>",
	"<h1>", "</h1>", "<h2>", "</h2>", "<h3>", "</h3>", "<pre>", "</pre>", "<pre>\n", "<listing>", "<br>", "</br>", "<hr>",
	"<main>", "</main>", "<article>", "</article>", "<header>", "</header>", "<footer>", "</footer>",
	"<nav>", "</nav>", "<aside>", "</aside>", `<div role="main">`, `<DIV ROLE="banner">`, `<span aria-hidden="true">`,
	`<div hidden>`, `<P HIDDEN>`, "<blockquote>", "</blockquote>", "<figure>", "<figcaption>", "<details>", "<summary>",
	"<script>var x = '<p>';</script>", "<style>p{}</style>", "<noscript>js</noscript>", "<title>T</title>",
	"<textarea>", "</textarea>", "<xmp>", "<iframe>", "<plaintext>", "<object>", "</object>",
	"<form>", "</form>", "<button>", "</button>", "<select>", "<option>", "</select>", "<input>", "<input type=hidden>",
	"<template>", "</template>", "<svg>", "</svg>", "<svg><title>t</title>", "<math>", "</math>", "<math><mi>",
	"<html>", "<head>", "</head>", "<body>", "</body>", "</html>", "<meta charset=utf-8>", "<frameset>",
	"<ruby><rt>", "<image>", "<img>", "<x-widget>", "</x-widget>", "<!-- c -->", "<!DOCTYPE html>",
	"&amp;", "&nbsp;", "&lt;p&gt;", " ", "\n", "\t", "\x00", "word", "more text", "x@y.example",
}

// keepsAll reports whether a piece of tagSoup leaves all text of a page
// in the main text: it opens no element that drops its content or is
// never main text (scripts, forms, SVG, navigation, hidden elements...),
// none that takes the main text away from the body (main, article,
// role=main), no raw text and no frameset.
func keepsAll(piece string) bool {
	for _, s := range []string{"main", "article", "header", "footer", "nav", "aside", "hidden", "role", "script", "style",
		"noscript", "title", "textarea", "xmp", "iframe", "plaintext", "object", "form", "button", "select", "template",
		"svg", "math", "frameset"} {
		if strings.Contains(strings.ToLower(piece), s) {
			return false
		}
	}
	return true
}

// TestStreamOnRandomMarkup feeds the streaming path tag soup: unclosed,
// misnested and stray tags of every kind the rules or the parser treat
// specially. It need not match the tree where the parser restructures
// (formatting elements closed across blocks, content moved out of tables,
// see stream.go), so the share of pages where both paths agree is only
// logged. Every page must come through without a panic or a hang, and on
// pages made only of pieces that keep all text, every text token must be
// in the extracted text.
func TestStreamOnRandomMarkup(t *testing.T) {
	t.Parallel()
	var kept []string
	for _, p := range tagSoup {
		if keepsAll(p) {
			kept = append(kept, p)
		}
	}
	r := rand.New(rand.NewPCG(7, 11))
	var compared, same [2]int
	for i := range 6000 {
		soup := [2][]string{tagSoup, kept}[i%2]
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteString("<!DOCTYPE html>")
		}
		for range 5 + r.IntN(60) {
			b.WriteString(soup[r.IntN(len(soup))])
		}
		page := []byte(b.String())
		stream := streamGuarded(t, page)
		if i%2 == 1 {
			for _, tok := range []string{"word", "more text"} {
				if got, want := strings.Count(stream, tok), bytes.Count(page, []byte(tok)); got != want {
					t.Fatalf("page %d: %q\n%d times %q in the streamed text, want %d:\n%s", i, page, got, tok, want, stream)
				}
			}
		}
		if _, err := html.Parse(bytes.NewReader(page)); err != nil {
			continue
		}
		tu, err := extractTree(context.Background(), &source{mem: page, size: int64(len(page))}, extract.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		compared[i%2]++
		if joinUnits(tu) == stream {
			same[i%2]++
		}
	}
	for k, name := range []string{"all pieces", "pieces that keep all text"} {
		t.Logf("%s: %d of %d pages (%.1f%%) the same on both paths", name, same[k], compared[k], 100*float64(same[k])/float64(compared[k]))
	}
}

// streamGuarded runs the streaming path over a page and fails the test if
// it panics or does not return within ten seconds.
func streamGuarded(t *testing.T, page []byte) string {
	t.Helper()
	type result struct {
		out   string
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{panic: p}
			}
		}()
		us, err := extractStream(context.Background(), &source{mem: page, size: int64(len(page))}, extract.Limits{})
		done <- result{out: joinUnits(us), err: err}
	}()
	select {
	case r := <-done:
		if r.panic != nil || r.err != nil {
			t.Fatalf("streaming path on %q: panic %v, error %v", page, r.panic, r.err)
		}
		return r.out
	case <-time.After(10 * time.Second):
		t.Fatalf("streaming path hangs on %q", page)
	}
	return ""
}

// TestStreamFromFile reads pages through the file source (seeks, buffered
// reads, decoding, a byte-order mark) and compares them with the tree path.
func TestStreamFromFile(t *testing.T) {
	t.Parallel()
	latin1 := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		// Latin-1 text in the main content, so that the file is decoded on
		// the way.
		b = bytes.Replace(b, []byte("charset=utf-8"), []byte("charset=iso-8859-1"), 1)
		if i := bytes.LastIndex(b, []byte("</main>")); i >= 0 {
			return slices.Insert(b, i, []byte("<p>Lef\xe8vre</p>")...)
		}
		return append(b, "<p>Lef\xe8vre</p>"...)
	}
	for _, tc := range []struct {
		name string
		page []byte
		want string
	}{
		{"layout", latin1("layout.html"), "Lefèvre"},
		{"tables", latin1("tables.html"), "Lefèvre"},
		{"utf-8 bom", []byte("\xEF\xBB\xBF<!DOCTYPE html><p>caf\xc3\xa9</p>"), "\ncafé\n"},
	} {
		path := filepath.Join(t.TempDir(), "page.html")
		if err := os.WriteFile(path, tc.page, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		src := &source{file: f, size: int64(len(tc.page))}
		if err := src.detect(); err != nil {
			t.Fatal(err)
		}
		us, err := extractStream(context.Background(), src, extract.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		tree, _ := bothPaths(t, tc.page, extract.Limits{})
		if stream := joinUnits(us); stream != tree {
			t.Errorf("%s: tree path:\n%s\nstreaming from the file:\n%s", tc.name, tree, stream)
		}
		if !strings.Contains(tree, tc.want) {
			t.Errorf("%s: no %q in\n%s", tc.name, tc.want, tree)
		}
	}
}

// TestValidUTF8AcrossReads checks the file source's UTF-8 test where a
// character straddles two reads.
func TestValidUTF8AcrossReads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		tail string
		want bool
	}{
		{"valid", "caf\xc3\xa9 cr\xc3\xa8me", true},
		{"invalid after the first read", "Lef\xe8vre", false},
		{"cut at the end", "caf\xc3", true},
	} {
		pad := (64 << 10) - 3 // puts the first é across the 64 KB boundary
		b := append(bytes.Repeat([]byte{'a'}, pad), tc.tail...)
		path := filepath.Join(t.TempDir(), "page.html")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		src := &source{file: f, size: int64(len(b))}
		got, err := src.validUTF8()
		f.Close()
		if err != nil || got != tc.want {
			t.Errorf("%s: valid = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// TestExtractLargeMemory extracts a page above streamFrom from a file and
// requires the peak heap to stay under twice the file: the tree path
// needed about 12 times.
func TestExtractLargeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 5 MB page")
	}
	// Not parallel: the peak must be this extraction's alone.
	path := filepath.Join(t.TempDir(), "large.html")
	if err := writeNested(path, streamFrom+(1<<20)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	debug.FreeOSMemory()
	var us []extract.Unit
	_, peak := measure(func() { us, err = Extract(context.Background(), path, extract.Limits{}) })
	if err != nil {
		t.Fatal(err)
	}
	if len(us) == 0 || !strings.Contains(us[len(us)-1].Text, "nested") {
		t.Fatalf("%d units, the last: %q", len(us), us[len(us)-1].Text)
	}
	ratio := float64(peak) / float64(fi.Size())
	t.Logf("peak heap %.1f MB for a %.1f MB page: %.2f per MB", float64(peak)/(1<<20), float64(fi.Size())/(1<<20), ratio)
	if ratio > 2 {
		t.Errorf("peak heap is %.2f times the page, want under 2", ratio)
	}
}

// Stream hands over the sections Extract returns, in order, for a small
// page (extracted whole) and a large one (streamed), and an error from
// emit stops it.
func TestStreamHandsOverWhatExtractReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 5 MB page")
	}
	dir := t.TempDir()
	small, large := filepath.Join(dir, "small.html"), filepath.Join(dir, "large.html")
	if err := writeFlat(small, 64<<10); err != nil {
		t.Fatal(err)
	}
	if err := writeFlat(large, streamFrom+(1<<20)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, path := range []string{small, large} {
		want, err := Extract(ctx, path, extract.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		handed := 0
		n, err := Stream(ctx, path, extract.Limits{}, func(u extract.Unit) error {
			handed++
			if u.Index != handed || u.Text != want[u.Index-1].Text {
				return fmt.Errorf("section %d (handed over %d) differs from Extract's", u.Index, handed)
			}
			return nil
		})
		if err != nil || n != len(want) || handed != len(want) {
			t.Fatalf("%s: Stream = %d, %v after %d sections; Extract returned %d", filepath.Base(path), n, err, handed, len(want))
		}
	}
	stop := errors.New("stop")
	calls := 0
	if _, err := Stream(ctx, large, extract.Limits{}, func(extract.Unit) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("an error from emit: err = %v after %d calls, want it back after 1", err, calls)
	}
}

// Streaming a page four times as large takes no more heap: what Stream
// holds is a section and its buffers, not the page.
func TestStreamMemoryDoesNotGrowWithThePage(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 25 MB of pages")
	}
	// Not parallel: the peaks must be these extractions' alone.
	peak := map[int]uint64{}
	for _, mb := range []int{5, 20} {
		path := filepath.Join(t.TempDir(), "page.html")
		if err := writeFlat(path, mb<<20); err != nil {
			t.Fatal(err)
		}
		var err error
		_, peak[mb] = measure(func() {
			_, err = Stream(context.Background(), path, extract.Limits{}, func(extract.Unit) error { return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d MB page: the heap rose by %.1f MB at most", mb, float64(peak[mb])/(1<<20))
	}
	if peak[20] > peak[5]+2<<20 {
		t.Errorf("streaming 20 MB took %d bytes of heap, 5 MB %d: it grows with the page", peak[20], peak[5])
	}
}
