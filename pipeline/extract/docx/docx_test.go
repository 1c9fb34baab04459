package docx

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

const samples = "../../../samples"

// docxFile writes a DOCX whose body is the given WordprocessingML.
func docxFile(t testing.TB, body string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="` + nsW +
		`" xmlns:mc="` + nsMC + `"><w:body>` + body + `</w:body></w:document>`))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "doc.docx")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func p(text string) string { return `<w:p><w:r><w:t>` + text + `</w:t></w:r></w:p>` }

func h(text string) string {
	return `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>` + text + `</w:t></w:r></w:p>`
}

const pageBreak = `<w:p><w:r><w:br w:type="page"/></w:r></w:p>`

func texts(units []extract.Unit) []string {
	out := make([]string, len(units))
	for i, u := range units {
		out[i] = u.Kind + ":" + u.Text
	}
	return out
}

func TestExtract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		limits extract.Limits
		want   []string
	}{
		{
			name: "explicit page breaks make pages",
			body: h("One") + p("alpha") + pageBreak + p("beta") + `<w:p><w:r><w:t>gamma</w:t><w:br w:type="page"/><w:t>delta</w:t></w:r></w:p>`,
			want: []string{"page:One\n\nalpha", "page:beta\n\ngamma", "page:delta"},
		},
		{
			name: "lastRenderedPageBreak is not a break",
			body: `<w:p><w:r><w:t>one </w:t></w:r><w:r><w:lastRenderedPageBreak/><w:t>two</w:t></w:r></w:p>`,
			want: []string{"section:one two"},
		},
		{
			name: "pageBreakBefore and next-page section breaks",
			body: p("a") + `<w:p><w:pPr><w:pageBreakBefore/></w:pPr><w:r><w:t>b</w:t></w:r></w:p>` +
				`<w:p><w:pPr><w:sectPr/></w:pPr><w:r><w:t>c</w:t></w:r></w:p>` +
				`<w:p><w:pPr><w:sectPr><w:type w:val="continuous"/></w:sectPr></w:pPr><w:r><w:t>d</w:t></w:r></w:p>` + p("e"),
			want: []string{"page:a", "page:b\n\nc", "page:d\n\ne"},
		},
		{
			name: "tables: tab between cells, newline between rows",
			body: `<w:tbl><w:tr><w:tc>` + p("Name") + `</w:tc><w:tc>` + p("Amount") + `</w:tc></w:tr>` +
				`<w:tr><w:tc>` + p("Ann") + p("Lee") + `</w:tc><w:tc>` + p("$5") + `</w:tc></w:tr></w:tbl>` + p("after"),
			want: []string{"section:Name\tAmount\nAnn Lee\t$5\n\nafter"},
		},
		{
			name: "runs, tabs, breaks, hyphens; tab stops and deleted or moved text ignored",
			body: `<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr>` +
				`<w:r><w:t xml:space="preserve">A </w:t></w:r><w:r><w:tab/><w:t>B</w:t><w:br/><w:t>C</w:t><w:noBreakHyphen/><w:t>D</w:t></w:r>` +
				`<w:del><w:r><w:delText>gone</w:delText></w:r></w:del><w:moveFrom><w:r><w:t>moved</w:t></w:r></w:moveFrom>` +
				`<w:r><w:instrText>PAGE</w:instrText></w:r></w:p>`,
			want: []string{"section:A \tB\nC-D"},
		},
		{
			name: "text box once, not again from its fallback",
			body: `<w:p><w:r><w:t>outer</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:txbxContent>` + p("boxed") +
				`</w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent>` + p("boxed") + `</w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>`,
			want: []string{"section:boxed\n\nouter"},
		},
		{
			name:   "without page breaks: sections at headings, bounded",
			body:   h("Intro") + p("aaaa aaaa") + p("bbbb bbbb") + h("Next") + p("cccc"),
			limits: extract.Limits{MaxSectionChars: 20},
			want:   []string{"section:Intro\n\naaaa aaaa", "section:bbbb bbbb", "section:Next\n\ncccc"},
		},
		{
			name:   "a page far over the section size falls back to sections",
			body:   p("short") + pageBreak + p(strings.Repeat("word ", 20)) + p("tail"),
			limits: extract.Limits{MaxSectionChars: 20},
			want:   []string{"section:short", "section:word word word word", "section:word word word word", "section:word word word word", "section:word word word word", "section:word word word word", "section:tail"},
		},
		{
			name: "empty document",
			body: `<w:sectPr/>`,
			want: []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := docxFile(t, tc.body)
			units, err := Extract(context.Background(), path, tc.limits)
			if err != nil {
				t.Fatal(err)
			}
			compareWithOracle(t, path, tc.limits)
			got := texts(units)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("units:\n%q\nwant:\n%q", got, tc.want)
			}
			for i, u := range units {
				if u.Index != i+1 {
					t.Fatalf("unit %d has index %d", i, u.Index)
				}
			}
		})
	}
}

func TestExtractReport(t *testing.T) {
	t.Parallel()
	units, err := Extract(context.Background(), filepath.Join(samples, "docs/report.docx"), extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 3 {
		t.Fatalf("%d units, want 3 pages: %q", len(units), texts(units))
	}
	want := [][]string{
		{"Northwind Logistics — Quarterly Operations Report, Q3 2024", "maria.gonzalez@northwind-logistics.example", "$4,182,500", "Board review:\t15 October 2024\nBudget freeze:"},
		{"2. Regional results", "Region\tManager\tRevenue\tContact\nNorth America\tDavid Chen\t$1,640,000", "$86,450 in total. Average settlement"},
		{"3. Risks and next steps", "€750,000", "finance-ops@northwind-logistics.example"},
	}
	for i, u := range units {
		if u.Kind != "page" || u.Index != i+1 {
			t.Fatalf("unit %d = %s %d", i, u.Kind, u.Index)
		}
		for _, w := range want[i] {
			if !strings.Contains(u.Text, w) {
				t.Errorf("page %d lacks %q:\n%s", i+1, w, u.Text)
			}
		}
	}
}

func TestExtractBadFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		path    func(t *testing.T) string
		limits  extract.Limits
		errName string
		errText string
	}{
		{"zip bomb", func(*testing.T) string { return filepath.Join(samples, "bad/zipbomb.docx") }, extract.Limits{}, steperr.NameTooLarge, "zip bomb"},
		{"zip bomb under a small budget", func(*testing.T) string { return filepath.Join(samples, "bad/zipbomb.docx") }, extract.Limits{MaxDecompressedBytes: 1 << 20}, steperr.NameTooLarge, "more than 1048576"},
		{"truncated", func(*testing.T) string { return filepath.Join(samples, "bad/truncated.docx") }, extract.Limits{}, steperr.NameInvalidDocument, "corrupt zip"},
		{"encrypted", func(*testing.T) string { return filepath.Join(samples, "bad/encrypted.docx") }, extract.Limits{}, steperr.NamePasswordProtected, "encrypted"},
		{"spreadsheet", func(*testing.T) string { return filepath.Join(samples, "bad/spreadsheet.xlsx") }, extract.Limits{}, steperr.NameUnsupportedFormat, "XLSX"},
		{"broken xml", func(t *testing.T) string { return docxFile(t, "<w:p><w:r><w:t>unclosed") }, extract.Limits{}, steperr.NameInvalidDocument, "not valid XML"},
		{"broken xml in a skipped fallback", func(t *testing.T) string {
			return docxFile(t, `<w:p><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Fallback><w:r><w:t>unclosed`)
		}, extract.Limits{}, steperr.NameInvalidDocument, "not valid XML"},
		{"too many pages", func(t *testing.T) string { return docxFile(t, p("a")+pageBreak+p("b")+pageBreak+p("c")) }, extract.Limits{MaxPages: 2}, steperr.NameTooLarge, "3 pages"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := tc.path(t)
			_, err := Extract(context.Background(), path, tc.limits)
			compareWithOracle(t, path, tc.limits)
			if steperr.Name(err) != tc.errName || !strings.Contains(err.Error(), tc.errText) {
				t.Fatalf("err = %v, want %s containing %q", err, tc.errName, tc.errText)
			}
		})
	}
}

func BenchmarkExtract(b *testing.B) {
	var body strings.Builder
	for i := 0; body.Len() < 8<<20; i++ {
		if i%20 == 0 {
			body.WriteString(h("Section heading"))
		}
		body.WriteString(p(fmt.Sprintf("Revenue for quarter %d ending %d September 2024 reached $%d, up %d.%d%% on Q2, said Maria Gonzalez.", i, i%30+1, i*7919%1000003, i%40, i%10)))
	}
	path := docxFile(b, body.String())
	b.SetBytes(int64(body.Len()))
	for b.Loop() {
		if _, err := Extract(context.Background(), path, extract.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
