package steps_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/docx"
	"github.com/docpipe/docpipe/pipeline/extract/mdtext"
	"github.com/docpipe/docpipe/pipeline/steps"
)

// writeDOCX writes a minimal DOCX whose body is the given WordprocessingML.
func writeDOCX(t *testing.T, path, body string) {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for name, content := range map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"_rels/.rels":         `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
		"word/document.xml":   `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` + body + `</w:body></w:document>`,
	} {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A DOCX with page breaks goes through format_parser's streamed path as
// pages.
func TestFormatParserStreamsDOCXPages(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	for page := 1; page <= 3; page++ {
		if page > 1 {
			body.WriteString(`<w:p><w:r><w:br w:type="page"/></w:r></w:p>`)
		}
		fmt.Fprintf(&body, `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Chapter %d</w:t></w:r></w:p>`, page)
		for i := range 5 {
			fmt.Fprintf(&body, `<w:p><w:r><w:t>Paragraph %d of chapter %d: the committee reviewed the budget of the new building.</w:t></w:r></w:p>`, i, page)
		}
	}
	path := filepath.Join(t.TempDir(), "report.docx")
	writeDOCX(t, path, body.String())
	checkStreamedParse(t, path, extract.Limits{}, docx.Extract, "page")
}

// Markdown goes through format_parser's streamed path as sections.
func TestFormatParserStreamsMarkdown(t *testing.T) {
	t.Parallel()
	var md strings.Builder
	for i := range 40 {
		fmt.Fprintf(&md, "## Part %d\n\nThe committee reviewed the [budget][b] of the new building, part %d.\n\n- one item\n- another item\n\n", i, i)
	}
	md.WriteString("[b]: https://example.com/budget\n")
	path := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(path, []byte(md.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	checkStreamedParse(t, path, extract.Limits{MaxSectionChars: 400}, mdtext.Extract, "section")
}

// checkStreamedParse runs segment_prep and format_parser on the file at
// path and checks that the units were stored as they came (the second
// unit's write is held until the first is seen stored, while the total is
// not known yet), and that the stored units are those extract returns, of
// the given kind.
func checkStreamedParse(t *testing.T, path string, limits extract.Limits, extractWhole func(context.Context, string, extract.Limits) ([]extract.Unit, error), kind string) {
	t.Helper()
	ctx := t.Context()
	repo, store, ig := newLocalProject(t, t.TempDir())
	want, err := extractWhole(ctx, path, limits)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 3 || want[0].Kind != kind {
		t.Fatalf("the whole extraction gave %d units of kind %q: the test needs 3 or more of kind %q", len(want), want[0].Kind, kind)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(path)
	reg, err := ig.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: name, FileURI: "upload:" + name, Body: bytes.NewReader(raw)})
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Ref()
	held := &heldBlobs{Store: store, key: pipeline.SegmentTextBlobKey(ref, 2), release: make(chan struct{})}
	handlers := pipeline.NewRegistry()
	steps.Register(handlers, steps.Deps{Repo: repo, Blobs: held, TempDir: t.TempDir(), Parallelism: 1, Limits: limits})
	invoke := stepInvoker(ctx, handlers, ref)
	if _, err := invoke(pipeline.StepSegmentPrep); err != nil {
		t.Fatal(err)
	}
	parsed := make(chan error, 1)
	var out pipeline.StepOutput
	go func() {
		var err error
		out, err = invoke(pipeline.StepFormatParser)
		parsed <- err
	}()
	// Streamed, units are stored while unit 2 waits, and their number is
	// not known yet.
	if p := progressMidway(t, repo, reg.Workflow.ID); p.Done < 1 || p.Done >= len(want) || p.Total != 0 || p.Unit != kind+"s" {
		t.Errorf("progress midway %+v, want some of %d %ss stored and no total yet", p, len(want), kind)
	}
	close(held.release)
	if err := <-parsed; err != nil {
		t.Fatal(err)
	}
	n := len(want)
	if msg := fmt.Sprintf("%d %ss", n, kind); out.Message != msg {
		t.Errorf("message %q, want %q", out.Message, msg)
	}
	prog, err := repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p := prog.Steps[pipeline.StepFormatParser].Progress; p == nil || p.Done != n || p.Total != n || p.Unit != kind+"s" {
		t.Errorf("progress %+v, want %d/%d %ss", p, n, n, kind)
	}
	for i, u := range want {
		got, err := blob.GetBytes(ctx, store, pipeline.SegmentTextBlobKey(ref, i+1), 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != u.Text {
			t.Errorf("%s %d = %q, want %q", kind, i+1, got, u.Text)
		}
	}
}
