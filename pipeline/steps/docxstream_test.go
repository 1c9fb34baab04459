package steps_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/docx"
	"github.com/docpipe/docpipe/pipeline/steps"
)

// writeDOCX writes a minimal DOCX whose body is the given WordprocessingML.
func writeDOCX(t *testing.T, path, body string) []byte {
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
	return buf.Bytes()
}

// A DOCX with page breaks goes through format_parser's streamed path as
// pages: progress and message count pages, and each page's blob is the
// page docx.Extract returns.
func TestFormatParserStreamsDOCXPages(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	repo, store, ig := newLocalProject(t, dir)
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
	path := filepath.Join(dir, "report.docx")
	raw := writeDOCX(t, path, body.String())
	want, err := docx.Extract(ctx, path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 3 || want[0].Kind != "page" {
		t.Fatalf("docx.Extract gave %d units of kind %q: the test needs 3 pages", len(want), want[0].Kind)
	}

	reg, err := ig.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: "report.docx", FileURI: "upload:report.docx", Body: bytes.NewReader(raw)})
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Ref()
	// Page 2's write waits until page 1 is seen stored: the pages are
	// stored as they come, not after the whole document.
	held := &heldBlobs{Store: store, key: pipeline.SegmentTextBlobKey(ref, 2), release: make(chan struct{})}
	handlers := pipeline.NewRegistry()
	steps.Register(handlers, steps.Deps{Repo: repo, Blobs: held, TempDir: t.TempDir(), Parallelism: 1})
	invoke := func(step string) (pipeline.StepOutput, error) {
		payload, _ := json.Marshal(pipeline.StepInput{Step: step, Workflow: ref})
		res, err := handlers.Invoke(ctx, payload)
		var out pipeline.StepOutput
		if err == nil {
			err = json.Unmarshal(res, &out)
		}
		return out, err
	}
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
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			close(held.release)
			t.Fatal("format_parser recorded no progress while it ran")
		}
		prog, err := repo.GetProgress(ctx, reg.Workflow.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p := prog.Steps[pipeline.StepFormatParser].Progress; p != nil {
			// Streamed, the number of pages is not known yet.
			if p.Done != 1 || p.Total != 0 || p.Unit != "pages" {
				t.Errorf("progress midway %+v, want 1 page of a total not known yet", p)
			}
			break
		}
	}
	close(held.release)
	if err := <-parsed; err != nil {
		t.Fatal(err)
	}
	if out.Message != "3 pages" {
		t.Errorf("message %q, want 3 pages", out.Message)
	}
	prog, err := repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p := prog.Steps[pipeline.StepFormatParser].Progress; p == nil || p.Done != 3 || p.Total != 3 || p.Unit != "pages" {
		t.Errorf("progress %+v, want 3/3 pages", p)
	}
	for i, u := range want {
		got, err := blob.GetBytes(ctx, store, pipeline.SegmentTextBlobKey(ref, i+1), 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != u.Text {
			t.Errorf("page %d = %q, want %q", i+1, got, u.Text)
		}
	}
}
