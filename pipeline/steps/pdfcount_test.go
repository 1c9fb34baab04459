package steps_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// countedStreamer is a PDF extractor that can be told the page count, and
// records how often it was asked to count pages and what it was told.
type countedStreamer struct {
	pages        int
	countedCalls atomic.Int32 // Pages
	toldPages    atomic.Int32 // the count StreamCountedPages was given
}

func (s *countedStreamer) Name() string { return "counted" }

func (s *countedStreamer) Pages(context.Context, string) (int, error) {
	s.countedCalls.Add(1)
	return s.pages, nil
}

func (s *countedStreamer) Extract(context.Context, string, extract.Limits) ([]extract.Unit, error) {
	panic("format_parser streams from a PageStreamer")
}

func (s *countedStreamer) StreamPages(context.Context, string, extract.Limits, func(extract.Unit) error) (int, error) {
	panic("format_parser passes the count segment_prep found")
}

func (s *countedStreamer) StreamCountedPages(_ context.Context, _ string, pages int, _ extract.Limits, emit func(extract.Unit) error) (int, error) {
	s.toldPages.Store(int32(pages))
	for i := 1; i <= pages; i++ {
		if err := emit(extract.Unit{Index: i, Kind: "page", Text: fmt.Sprintf("Page %d of the counted document.", i)}); err != nil {
			return 0, err
		}
	}
	return pages, nil
}

// segment_prep counts a PDF's pages once; format_parser hands that count
// to an extractor that takes one instead of having it count again.
func TestFormatParserPassesThePageCount(t *testing.T) {
	t.Parallel()
	x := &countedStreamer{pages: 7}
	repo, reg, invoke := pdfWorkflow(t, x)
	for _, step := range []string{pipeline.StepSegmentPrep, pipeline.StepFormatParser} {
		if _, err := invoke(step); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	if n := x.countedCalls.Load(); n != 1 {
		t.Errorf("pages counted %d times, want once (by segment_prep)", n)
	}
	if n := x.toldPages.Load(); n != 7 {
		t.Errorf("format_parser told the extractor %d pages, want 7", n)
	}
	prog, err := repo.GetProgress(t.Context(), reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.TotalSegments != 7 {
		t.Errorf("%d segments, want 7", prog.TotalSegments)
	}
}

// A workflow superseding another on the same bytes takes the page count
// segment_prep found then, with the same backend, instead of walking the
// page tree again; --no-cache counts afresh.
func TestABackfillTakesThePageCountItSupersedes(t *testing.T) {
	t.Parallel()
	x := &countedStreamer{pages: 7}
	ctx := t.Context()
	repo, reg, handlers := pdfHandlers(t, x)
	if _, err := stepInvoker(ctx, handlers, reg.Ref())(pipeline.StepSegmentPrep); err != nil {
		t.Fatal(err)
	}
	prev := reg.Workflow
	for _, noCache := range []bool{false, true} {
		next, err := repo.StartBackfillWorkflow(ctx, prev, prev.PipelineVersion, pipelinefile.Default().Stages, noCache)
		if err != nil {
			t.Fatal(err)
		}
		before := x.countedCalls.Load()
		out, err := stepInvoker(ctx, handlers, pipeline.WorkflowRef{ProjectID: next.ProjectID, DocumentID: next.DocumentID, WorkflowID: next.ID})(pipeline.StepSegmentPrep)
		if err != nil {
			t.Fatal(err)
		}
		counted := x.countedCalls.Load() - before
		if want := map[bool]int32{false: 0, true: 1}[noCache]; counted != want {
			t.Errorf("no-cache %v: pages counted %d times, want %d", noCache, counted, want)
		}
		if !strings.Contains(out.Message, "7 pages") {
			t.Errorf("no-cache %v: segment_prep says %q, want 7 pages", noCache, out.Message)
		}
		prev = next
	}
}
