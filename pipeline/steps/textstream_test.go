package steps_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/steps"
)

// heldBlobs holds the write of one key until the test lets it go on.
type heldBlobs struct {
	blob.Store
	key     string
	release chan struct{}
}

func (b *heldBlobs) Put(ctx context.Context, key string, r io.Reader) error {
	if key == b.key {
		select {
		case <-b.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return b.Store.Put(ctx, key, r)
}

// A text file goes through format_parser's streamed path: sections are
// stored as they come, with progress against a total not yet known, and
// the step stores the segments, units, attributes and outcome the
// buffered path stored: one blob per section of plaintext.Extract.
func TestFormatParserStreamsText(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	repo, store, ig := newLocalProject(t, dir)
	var text strings.Builder
	text.WriteString("\xEF\xBB\xBFQuarterly report\r\n\r\n")
	for i := range 400 {
		fmt.Fprintf(&text, "Paragraph %d: the committee reviewed the budget and the schedule of the new building, and agreed to meet again next week.  \r\n", i)
		if i%3 == 2 {
			text.WriteString("\r\n")
		}
		if i%97 == 96 {
			text.WriteString("\f")
		}
	}
	body := []byte(text.String())
	path := filepath.Join(dir, "report.txt")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	limits := extract.Limits{MaxSectionChars: 1000}
	want, err := plaintext.Extract(ctx, path, limits)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 10 {
		t.Fatalf("only %d sections: the test needs more", len(want))
	}

	reg, err := ig.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: "report.txt", FileURI: "upload:report.txt", Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Ref()
	held := &heldBlobs{Store: store, key: pipeline.SegmentTextBlobKey(ref, 2), release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-held.release:
		default:
			close(held.release)
		}
	})
	handlers := pipeline.NewRegistry()
	steps.Register(handlers, steps.Deps{Repo: repo, Blobs: held, TempDir: t.TempDir(), Parallelism: 1, Limits: limits})
	invoke := stepInvoker(ctx, handlers, ref)
	if _, err := invoke(pipeline.StepSegmentPrep); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out pipeline.StepOutput
		err error
	}
	parsed := make(chan result, 1)
	go func() {
		out, err := invoke(pipeline.StepFormatParser)
		parsed <- result{out, err}
	}()
	seen := progressMidway(t, repo, reg.Workflow.ID)
	// Sections are stored while section 2 waits: they were not all
	// extracted first, and their number is not known yet.
	if seen.Done < 1 || seen.Done >= len(want) || seen.Total != 0 || seen.Unit != "sections" {
		t.Errorf("progress midway %+v, want some of %d sections stored and no total yet", seen, len(want))
	}
	close(held.release)
	res := <-parsed
	if res.err != nil {
		t.Fatal(res.err)
	}

	n := len(want)
	if wantMsg := fmt.Sprintf("%d sections", n); res.out.Message != wantMsg {
		t.Errorf("message %q, want %q", res.out.Message, wantMsg)
	}
	prog, err := repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	st := prog.Steps[pipeline.StepFormatParser]
	if st.Status != pipeline.StepCompleted || prog.TotalSegments != n {
		t.Errorf("after format_parser: %s, %d segments, want %d", st.Status, prog.TotalSegments, n)
	}
	if p := st.Progress; p == nil || p.Done != n || p.Total != n {
		t.Errorf("final progress %+v, want %d/%d", p, n, n)
	}
	getJSON := func(key string, v any) {
		t.Helper()
		b, err := blob.GetBytes(ctx, store, key, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	var units []struct {
		Index int    `json:"index"`
		Kind  string `json:"kind"`
		Chars int    `json:"chars"`
	}
	getJSON(pipeline.UnitsBlobKey(ref), &units)
	if len(units) != n {
		t.Fatalf("units.json has %d units, want %d", len(units), n)
	}
	for i, u := range want {
		got, err := blob.GetBytes(ctx, store, pipeline.SegmentTextBlobKey(ref, i+1), 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != u.Text {
			t.Fatalf("segment %d = %.80q, want %.80q", i+1, got, u.Text)
		}
		if units[i].Index != i+1 || units[i].Kind != "section" || units[i].Chars != len(u.Text) {
			t.Errorf("units.json[%d] = %+v", i, units[i])
		}
	}
	var doc pipeline.DocAttrs
	getJSON(pipeline.DocAttrsBlobKey(ref), &doc)
	if doc != (pipeline.DocAttrs{Format: "text", Language: "en", Pages: n}) {
		t.Errorf("document attributes %+v", doc)
	}
}
