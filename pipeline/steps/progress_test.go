package steps_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/steps"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// heldStreamer streams pages pages of text: the first at once, the rest
// once the test lets it go on, so the test can look at the step midway.
type heldStreamer struct {
	pages   int
	release chan struct{}
}

func (s *heldStreamer) Name() string { return "held" }

func (s *heldStreamer) Pages(context.Context, string) (int, error) { return s.pages, nil }

func (s *heldStreamer) Extract(context.Context, string, extract.Limits) ([]extract.Unit, error) {
	panic("format_parser streams from a PageStreamer")
}

func (s *heldStreamer) StreamPages(ctx context.Context, _ string, _ extract.Limits, emit func(extract.Unit) error) (int, error) {
	for i := 1; i <= s.pages; i++ {
		if i == 2 {
			select {
			case <-s.release:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		if err := emit(extract.Unit{Index: i, Kind: "page", Text: fmt.Sprintf("Page %d says hello to the reader.", i)}); err != nil {
			return 0, err
		}
	}
	return s.pages, nil
}

// format_parser records its progress on the step item while it runs: the
// first page once the step has run pipeline.FirstProgressAfter (the stream
// holds the rest), with the total segment_prep counted.
func TestFormatParserRecordsProgressWhileItRuns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	x := &heldStreamer{pages: 40, release: make(chan struct{})}
	repo, reg, invoke := pdfWorkflow(t, x)
	if _, err := invoke(pipeline.StepSegmentPrep); err != nil {
		t.Fatal(err)
	}

	parsed := make(chan error, 1)
	go func() {
		_, err := invoke(pipeline.StepFormatParser)
		parsed <- err
	}()
	t.Cleanup(func() {
		select {
		case <-x.release:
		default:
			close(x.release)
		}
	})
	seen := progressMidway(t, repo, reg.Workflow.ID)
	if seen.Done != 1 || seen.Total != 40 || seen.Unit != "pages" {
		t.Errorf("progress midway %+v, want 1/40 pages", seen)
	}
	close(x.release)
	if err := <-parsed; err != nil {
		t.Fatal(err)
	}
	prog, err := repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st := prog.Steps[pipeline.StepFormatParser]; st.Status != pipeline.StepCompleted || prog.TotalSegments != 40 {
		t.Errorf("after format_parser: %s, %d segments", st.Status, prog.TotalSegments)
	}
}

// pdfWorkflow registers a one-page PDF in a new local project and returns
// the repository, the registration and an invoker of its steps, which
// extract PDFs with x.
func pdfWorkflow(t *testing.T, x extract.PDFExtractor) (*pipeline.Repository, pipeline.Registration, func(step string) (pipeline.StepOutput, error)) {
	t.Helper()
	repo, reg, handlers := pdfHandlers(t, x)
	return repo, reg, stepInvoker(t.Context(), handlers, reg.Ref())
}

// pdfHandlers registers a one-page PDF in a fresh local project and
// returns the step handlers, with x as their PDF extractor.
func pdfHandlers(t *testing.T, x extract.PDFExtractor) (*pipeline.Repository, pipeline.Registration, *pipeline.Registry) {
	t.Helper()
	ctx := t.Context()
	repo, blobs, ig := newLocalProject(t, t.TempDir())
	var pdf bytes.Buffer
	if err := pdfgen.Write(&pdf, pdfgen.Options{Pages: 1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	reg, err := ig.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: "r.pdf", FileURI: "upload:r.pdf", Body: &pdf})
	if err != nil {
		t.Fatal(err)
	}
	handlers := pipeline.NewRegistry()
	steps.Register(handlers, steps.Deps{Repo: repo, Blobs: blobs, PDF: x, TempDir: t.TempDir(), Parallelism: 2})
	return repo, reg, handlers
}

// newLocalProject opens a SQLite table and a blob directory in dir and
// returns a repository, the store and an ingester for project "p".
func newLocalProject(t *testing.T, dir string) (*pipeline.Repository, *dirblob.Store, *pipeline.Ingester) {
	t.Helper()
	tbl, err := sqlitetable.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	blobs, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := pipeline.NewRepository(tbl)
	ig := &pipeline.Ingester{Repo: repo, Blobs: blobs, Definition: pipelinefile.Default(), Bucket: "local"}
	if err := ig.EnsureProject(t.Context(), "p", "p"); err != nil {
		t.Fatal(err)
	}
	return repo, blobs, ig
}

// stepInvoker returns a function that invokes one step of ref's workflow
// through handlers, as an engine does, and decodes its output.
func stepInvoker(ctx context.Context, handlers *pipeline.Registry, ref pipeline.WorkflowRef) func(step string) (pipeline.StepOutput, error) {
	return func(step string) (pipeline.StepOutput, error) {
		payload, _ := json.Marshal(pipeline.StepInput{Step: step, Workflow: ref})
		raw, err := handlers.Invoke(ctx, payload)
		var out pipeline.StepOutput
		if err == nil {
			err = json.Unmarshal(raw, &out)
		}
		return out, err
	}
}

// progressMidway waits, up to a minute, for format_parser of workflowID to
// be in progress with a count recorded, and returns that count.
func progressMidway(t *testing.T, repo *pipeline.Repository, workflowID string) *pipeline.StepRunProgress {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("format_parser recorded no progress while it ran")
		}
		prog, err := repo.GetProgress(t.Context(), workflowID)
		if err != nil {
			t.Fatal(err)
		}
		if st := prog.Steps[pipeline.StepFormatParser]; st.Status == pipeline.StepInProgress && st.Progress != nil {
			return st.Progress
		}
	}
}
