package htmltext

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

const samples = "../../../samples"

func units(t *testing.T, src string, limits extract.Limits) []string {
	t.Helper()
	us, err := ExtractBytes(context.Background(), []byte(src), limits)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(us))
	for i, u := range us {
		if u.Index != i+1 || u.Kind != "section" {
			t.Fatalf("unit %d = %+v", i, u)
		}
		out[i] = u.Text
	}
	return out
}

// extractCases are pages with the units they must give; the equivalence
// test also runs them through both paths.
var extractCases = []struct {
	name   string
	src    string
	limits extract.Limits
	want   []string
}{
	{
		name: "drops chrome, keeps body text",
		src: `<html><head><title>T</title><style>p{}</style><script>var x=1</script></head><body>
				<header>Site name</header><nav>Home | News</nav><p>Hello   <b>big</b>
				world.</p><aside>Ads</aside><form>Email <input></form><noscript>Enable JS</noscript>
				<template><p>tpl</p></template><div hidden>secret</div><footer>(c) 2024</footer></body></html>`,
		want: []string{"Hello big world."},
	},
	{
		name: "prefers main and keeps its own header and footer",
		src: `<body><p>outside</p><main><header>Article header</header><p>inside</p>
				<footer>Article footer</footer></main><p>also outside</p></body>`,
		want: []string{"Article header\n\ninside\n\nArticle footer"},
	},
	{
		name: "articles when there is no main",
		src:  `<body><div>menu</div><article><p>one</p></article><article><p>two</p><article><p>nested</p></article></article></body>`,
		want: []string{"one\n\ntwo\n\nnested"},
	},
	{
		name: "headings start sections; tables and lists",
		src: `<body><h1>Title</h1><p>Intro.</p><h2>Costs</h2><table><tr><th>Item</th><th>Cost</th></tr>
				<tr><td><p>Paths</p></td><td>$450</td></tr></table><ul><li>one</li><li>two<ul><li>two.a</li></ul></li></ul>
				<p>line<br>break</p><pre>  code
  block</pre></body>`,
		want: []string{"Title\n\nIntro.", "Costs\n\nItem\tCost\nPaths\t$450\n\none\ntwo\ntwo.a\n\nline\nbreak\n\n  code\n  block"},
	},
	{
		name: "mailto address kept when the text hides it",
		src:  `<p>Write to <a href="mailto:a@b.example?subject=x">us</a> or <a href="mailto:c@d.example">c@d.example</a>.</p>`,
		want: []string{"Write to us (a@b.example) or c@d.example."},
	},
	{
		name:   "sections bounded",
		src:    `<p>aaaa aaaa</p><p>bbbb bbbb</p><p>cccc</p>`,
		limits: extract.Limits{MaxSectionChars: 12},
		want:   []string{"aaaa aaaa", "bbbb bbbb", "cccc"},
	},
	{
		name: "meta charset windows-1252",
		src:  "<html><head><meta charset=\"windows-1252\"></head><body><p>Caf\xe9 \x80 5</p></body></html>",
		want: []string{"Café € 5"},
	},
	{
		name: "no charset, invalid utf-8 falls back to windows-1252",
		src:  "<p>Lef\xe8vre</p>",
		want: []string{"Lefèvre"},
	},
	{
		name: "utf-16 with bom",
		src:  "\xFF\xFE<\x00p\x00>\x00h\x00\xe9\x00<\x00/\x00p\x00>\x00",
		want: []string{"hé"},
	},
	{
		name: "only script",
		src:  `<html><body><script>alert(1)</script></body></html>`,
		want: []string{},
	},
	{
		name: "no charset, valid utf-8 after the first 1024 bytes is utf-8",
		src:  "<!--" + strings.Repeat("-", 1100) + "--><p>Caf\xc3\xa9 cr\xc3\xa8me</p>",
		want: []string{"Café crème"},
	},
	{
		name: "no charset, invalid utf-8 after the first 1024 bytes is windows-1252",
		src:  "<!--" + strings.Repeat("-", 1100) + "--><p>Caf\xc3\xa9 Lef\xe8vre</p>",
		want: []string{"CafÃ© Lefèvre"},
	},
	{
		name: "meta charset wins over valid utf-8",
		src:  "<meta charset=\"windows-1252\"><p>Caf\xc3\xa9</p>",
		want: []string{"CafÃ©"},
	},
	{
		name: "http-equiv charset wins over valid utf-8",
		src:  "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=ISO-8859-1\"><p>Caf\xc3\xa9 Caf\xe9</p>",
		want: []string{"CafÃ© Café"},
	},
	{
		name: "utf-8 bom is not text",
		src:  "\xEF\xBB\xBF<!DOCTYPE html><p>caf\xc3\xa9 <table><tr><td>x</table>",
		want: []string{"café\n\nx"},
	},
	{
		name: "role=main is the main content",
		src: `<body><div role="banner">Site</div><div role="navigation">Menu</div><div role="main"><header>Kept header</header>
				<p>Main text.</p></div><div role="contentinfo">Footer</div></body>`,
		want: []string{"Kept header\n\nMain text."},
	},
	{
		name: "nested mains are read once",
		src:  `<body><main><p>outer</p><main><p>inner</p></main></main><main><p>second</p></main></body>`,
		want: []string{"outer\n\ninner\n\nsecond"},
	},
	{
		name: "a heading inside a heading is part of it",
		src:  `<h1>Top <span><h2>inner</h2></span> end</h1><p>text</p>`,
		want: []string{"Top inner end\n\ntext"},
	},
}

func TestExtractBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range extractCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := units(t, tc.src, tc.limits)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("units:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

func TestExtractSample(t *testing.T) {
	t.Parallel()
	us, err := Extract(context.Background(), filepath.Join(samples, "docs/page.html"), extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, u := range us {
		all.WriteString(u.Text + "\n---\n")
	}
	text := all.String()
	if len(us) != 3 {
		t.Fatalf("%d sections, want 3 (one per heading):\n%s", len(us), text)
	}
	for _, w := range []string{"City council approves riverside park budget", "By Daniel Okafor, 12 September 2024",
		"$2.4 million", "Riverbank restoration\t$1,100,000", "the parks department (parks@millbrook.example)",
		"Open house: 18 September 2024, 6 pm, Millbrook Library"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q", w)
		}
	}
	for _, bad := range []string{"analytics", "font-family", "Sport", "Subscribe", "newsletter", "Related", "newsroom@", "Millbrook Gazette.", "pixel"} {
		if strings.Contains(text, bad) {
			t.Errorf("text keeps %q, which should be dropped:\n%s", bad, text)
		}
	}
}

func TestExtractLimits(t *testing.T) {
	t.Parallel()
	_, err := Extract(context.Background(), filepath.Join(samples, "docs/page.html"), extract.Limits{MaxFileBytes: 100})
	if steperr.Name(err) != steperr.NameTooLarge {
		t.Fatalf("err = %v, want TooLarge", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ExtractBytes(ctx, []byte("<p>x</p>"), extract.Limits{}); err != context.Canceled {
		t.Fatalf("canceled: %v", err)
	}
}

func BenchmarkExtract(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("<html><head><script>var a=1;</script></head><body><nav>menu</nav><main>")
	for i := 0; sb.Len() < 8<<20; i++ {
		if i%20 == 0 {
			sb.WriteString("<h2>Section heading</h2>")
		}
		sb.WriteString(`<p>The council voted <b>7 to 2</b> to approve <a href="/x">$2.4 million</a> for the park, said Rebecca Stein.</p>`)
	}
	sb.WriteString("</main></body></html>")
	src := []byte(sb.String())
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := ExtractBytes(context.Background(), src, extract.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestExtractEmpty(t *testing.T) {
	t.Parallel()
	for _, b := range [][]byte{nil, {}, []byte("   \n")} {
		us, err := ExtractBytes(context.Background(), b, extract.Limits{})
		if err != nil || len(us) != 0 {
			t.Errorf("%q: %v, %v", b, us, err)
		}
		src := &source{mem: b}
		if err := src.detect(); err != nil {
			t.Fatal(err)
		}
		if us, err := extractStream(context.Background(), src, extract.Limits{}); err != nil || len(us) != 0 {
			t.Errorf("%q streamed: %v, %v", b, us, err)
		}
	}
}
