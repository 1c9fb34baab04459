package embedded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/extract/pdftext"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
	"github.com/docpipe/docpipe/pipeline/steps"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/statemachine/embedded"
)

type bundle struct {
	repo     *pipeline.Repository
	ingester *pipeline.Ingester
	engine   *embedded.Engine
}

func setup(t *testing.T) bundle {
	return setupWith(t, func(s blob.Store) blob.Store { return s })
}

func setupWith(t *testing.T, wrap func(blob.Store) blob.Store) bundle {
	return setupWrapped(t, wrap, func(tb table.Table) table.Table { return tb })
}

// setupWrapped is setup with the blob store and the table each wrapped.
func setupWrapped(t *testing.T, wrap func(blob.Store) blob.Store, wrapTable func(table.Table) table.Table) bundle {
	t.Helper()
	dir := t.TempDir()
	tbl, err := sqlitetable.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	dirBlobs, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	blobs := wrap(dirBlobs)
	repo := pipeline.NewRepository(wrapTable(tbl))
	pdf, err := pdftext.New("go")
	if err != nil {
		t.Fatal(err)
	}
	reg := pipeline.NewRegistry()
	def := pipelinefile.Default()
	def.BatchSize = 2 // several batches even for small samples
	rec := pipeline.BatchRecorder(repo)
	steps.Register(reg, steps.Deps{Repo: repo, Blobs: blobs, Pipelines: pipeline.NewStaticPipelines(def), PDF: pdf, TempDir: dir, Recorder: rec})
	eng, err := embedded.New(reg, blobs, embedded.Options{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	ig := &pipeline.Ingester{Repo: repo, Blobs: blobs, Definition: def, Bucket: "local"}
	if err := ig.EnsureProject(context.Background(), "p", "p"); err != nil {
		t.Fatal(err)
	}
	return bundle{repo: repo, ingester: ig, engine: eng}
}

func (b bundle) runFile(t *testing.T, path string) pipeline.StepProgress {
	t.Helper()
	_, prog := b.runFileRef(t, path)
	return prog
}

func (b bundle) runFileRef(t *testing.T, path string) (pipeline.Registration, pipeline.StepProgress) {
	t.Helper()
	ctx := context.Background()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reg, err := b.ingester.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: filepath.Base(path), FileURI: path, Body: f})
	if err != nil {
		t.Fatal(err)
	}
	runErr := b.engine.Run(ctx, b.ingester.Definition, 0, b.ingester.ExecutionInput(reg))
	prog, err := b.repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: run error %v, status %s, error %q, segments %d/%d/%d/%d", path, runErr, prog.Status, prog.Error, prog.TotalSegments, prog.SegmentsDone, prog.SegmentsFailed, prog.SegmentsSkipped)
	return reg, prog
}

func TestSamplesComplete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, name := range []string{"letter.txt", "letter-latin1.txt", "notes.md", "page.html", "report.docx"} {
		prog := b.runFile(t, filepath.Join("..", "..", "samples", "docs", name))
		if prog.Status != pipeline.WorkflowCompleted {
			t.Errorf("%s: status %s (%s)", name, prog.Status, prog.Error)
		}
		if prog.TotalSegments == 0 || prog.SegmentsDone != prog.TotalSegments {
			t.Errorf("%s: %d of %d segments done", name, prog.SegmentsDone, prog.TotalSegments)
		}
		for step, st := range prog.Steps {
			if st.Status != pipeline.StepCompleted && st.Status != pipeline.StepSkipped && step != pipeline.StepWorkflowFailed && step != pipeline.StepFinalize {
				t.Errorf("%s: step %s is %s", name, step, st.Status)
			}
		}
	}
}

// A batch mixing good and bad files: each bad one fails its own workflow
// with a readable reason; the good ones (including a PDF named .txt and
// text in odd encodings) complete.
func TestBadInputsFailTheirOwnWorkflow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	bad := filepath.Join("..", "..", "samples", "bad")
	pdfs := filepath.Join("..", "..", "pipeline", "extract", "pdftext", "testdata")
	for _, tc := range []struct {
		path   string
		status pipeline.WorkflowStatus
		reason string
	}{
		{filepath.Join(bad, "empty.txt"), pipeline.WorkflowFailed, "file is empty"},
		{filepath.Join(bad, "random.bin"), pipeline.WorkflowFailed, "binary data of unknown format"},
		{filepath.Join(bad, "binary-ish.txt"), pipeline.WorkflowFailed, "unknown format"},
		{filepath.Join(bad, "truncated.docx"), pipeline.WorkflowFailed, "corrupt zip"},
		{filepath.Join(bad, "encrypted.docx"), pipeline.WorkflowFailed, "password"},
		{filepath.Join(bad, "zipbomb.docx"), pipeline.WorkflowFailed, "zip bomb"},
		{filepath.Join(bad, "legacy.doc"), pipeline.WorkflowFailed, ".doc"},
		{filepath.Join(bad, "image.gif"), pipeline.WorkflowFailed, "not a supported format"},
		{filepath.Join(bad, "spreadsheet.xlsx"), pipeline.WorkflowFailed, "XLSX"},
		{filepath.Join(pdfs, "truncated.pdf"), pipeline.WorkflowFailed, ""},
		{filepath.Join(pdfs, "user-password.pdf"), pipeline.WorkflowFailed, "password"},
		{filepath.Join(pdfs, "cyclic-page-tree.pdf"), "", ""}, // any final status, never a hang
		{filepath.Join(bad, "pdf-named.txt"), pipeline.WorkflowCompleted, ""},
		{filepath.Join(bad, "mixed-utf8.txt"), pipeline.WorkflowCompleted, ""},
		{filepath.Join(bad, "utf16-nobom.txt"), pipeline.WorkflowCompleted, ""},
		{filepath.Join(pdfs, "rc4-128-empty-password.pdf"), pipeline.WorkflowCompleted, ""},
		{filepath.Join(pdfs, "aes-128-empty-password.pdf"), pipeline.WorkflowCompleted, ""},
		{filepath.Join("..", "..", "samples", "docs", "letter.txt"), pipeline.WorkflowCompleted, ""},
	} {
		prog := b.runFile(t, tc.path)
		if tc.status == "" {
			if prog.Status != pipeline.WorkflowCompleted && prog.Status != pipeline.WorkflowFailed {
				t.Errorf("%s: status %s, want a final status", tc.path, prog.Status)
			}
			continue
		}
		if prog.Status != tc.status {
			t.Errorf("%s: status %s (%q), want %s", tc.path, prog.Status, prog.Error, tc.status)
			continue
		}
		if tc.status == pipeline.WorkflowFailed {
			if prog.Error == "" || !strings.Contains(prog.Error, tc.reason) {
				t.Errorf("%s: reason %q, want it to mention %q", tc.path, prog.Error, tc.reason)
			}
			if prog.Steps[pipeline.StepSegmentPrep].Status != pipeline.StepFailed && prog.Steps[pipeline.StepFormatParser].Status != pipeline.StepFailed {
				t.Errorf("%s: no step recorded the failure: %+v", tc.path, prog.Steps)
			}
			for name, st := range prog.Steps {
				if st.Status == pipeline.StepInProgress {
					t.Errorf("%s: step %s left in progress", tc.path, name)
				}
			}
		}
	}
}

// hidingStore makes chosen keys look missing, to make segments fail.
type hidingStore struct {
	blob.Store
	mu     sync.Mutex
	suffix string
}

func (h *hidingStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	h.mu.Lock()
	hide := h.suffix != "" && strings.HasSuffix(key, h.suffix)
	h.mu.Unlock()
	if hide {
		return nil, blob.ErrNotFound
	}
	return h.Store.Get(ctx, key)
}

// A failed segment does not sink its document, and a re-run redoes only
// what failed.
func TestFailedSegmentsRerun(t *testing.T) {
	t.Parallel()
	hiding := &hidingStore{suffix: "segments/000002/text.txt"}
	b := setupWith(t, func(s blob.Store) blob.Store { hiding.Store = s; return hiding })
	ctx := context.Background()
	reg, prog := b.runFileRef(t, filepath.Join("..", "..", "samples", "docs", "notes.md"))
	if prog.Status != pipeline.WorkflowCompleted || prog.SegmentsFailed != 1 || prog.SegmentsDone != prog.TotalSegments-1 {
		t.Fatalf("first run: %+v", prog)
	}
	seg, err := b.repo.GetSegment(ctx, reg.Workflow.ID, 2)
	if err != nil || seg.Status != pipeline.SegmentFailed || !strings.Contains(seg.Error, "missing") {
		t.Fatalf("segment 2 = %+v, %v; want failed with a reason", seg, err)
	}
	// Segment 2's text is back; segment 1 (finished, same batch) becomes
	// unreadable: the re-run must keep its earlier result, not redo it.
	hiding.mu.Lock()
	hiding.suffix = "segments/000001/text.txt"
	hiding.mu.Unlock()

	def := pipelinefile.Default()
	reset, err := b.repo.PrepareRerun(ctx, reg.Ref(), def)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{pipeline.StepSegmentAnalyzer, pipeline.StepGraphBuilder, pipeline.StepDocumentSummarizer}
	if strings.Join(reset, ",") != strings.Join(want, ",") {
		t.Errorf("reset %v, want %v", reset, want)
	}
	before, _ := b.repo.GetSegment(ctx, reg.Workflow.ID, 4)
	if err := b.engine.Run(ctx, b.ingester.Definition, 0, b.ingester.ExecutionInput(reg)); err != nil {
		t.Fatal(err)
	}
	prog, err = b.repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Status != pipeline.WorkflowCompleted || prog.SegmentsFailed != 0 || prog.SegmentsDone != prog.TotalSegments {
		t.Errorf("after re-run: %+v", prog)
	}
	var batch1 []stageoutput.BatchEntry
	raw, err := blob.GetBytes(ctx, hiding.Store, pipeline.BatchAnalysisBlobKey(reg.Ref(), 1), 1<<20)
	if err != nil || json.Unmarshal(raw, &batch1) != nil || len(batch1) != 2 {
		t.Fatalf("batch 1 analysis: %s, %v", raw, err)
	}
	for _, e := range batch1 {
		if e.Status != pipeline.SegmentDone || e.Result == nil {
			t.Errorf("batch 1 segment %d after the re-run: %s %q", e.Index, e.Status, e.Error)
		}
	}
	after, _ := b.repo.GetSegment(ctx, reg.Workflow.ID, 4)
	if before.UpdatedAt != after.UpdatedAt {
		t.Errorf("segment 4 (in a finished batch) was redone: %s → %s", before.UpdatedAt, after.UpdatedAt)
	}
	if reset, err := b.repo.PrepareRerun(ctx, reg.Ref(), def); err != nil || len(reset) != 0 {
		t.Errorf("nothing left to re-run, got %v, %v", reset, err)
	}
}

// A workflow that failed with a step left in progress (a timeout, a killed
// worker) or before any step started is re-run from that step, and ends in
// a final state again — never stuck in progress.
func TestRerunAfterFailureOutsideAStep(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(path, []byte("Maria Schneider signed the contract in Hamburg on 5 March 2024.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	reg, err := b.ingester.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: "note.txt", Body: f})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Ref()
	// As if the execution timed out inside segment_prep and the reconciler
	// failed the workflow.
	if _, err := b.repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.repo.TransitionSteps(ctx, ref, pipeline.StepChange{Step: pipeline.StepSegmentPrep, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowFailed, "States.Timeout"); err != nil {
		t.Fatal(err)
	}
	reset, err := b.repo.PrepareRerun(ctx, ref, pipelinefile.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(reset) == 0 || reset[0] != pipeline.StepSegmentPrep {
		t.Fatalf("reset %v, want it to start at segment_prep", reset)
	}
	if err := b.engine.Run(ctx, b.ingester.Definition, 0, b.ingester.ExecutionInput(reg)); err != nil {
		t.Fatal(err)
	}
	prog, err := b.repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Status != pipeline.WorkflowCompleted || prog.SegmentsDone != prog.TotalSegments {
		t.Errorf("after re-run: %s, %d/%d", prog.Status, prog.SegmentsDone, prog.TotalSegments)
	}
}

// txLog records the transactions a table is asked to commit.
type txLog struct {
	table.Table
	mu  sync.Mutex
	txs [][]table.TxAction
}

func (l *txLog) Transact(ctx context.Context, actions []table.TxAction) error {
	err := l.Table.Transact(ctx, actions)
	if err == nil {
		l.mu.Lock()
		l.txs = append(l.txs, actions)
		l.mu.Unlock()
	}
	return err
}

// transitionsOf lists the steps whose audit items a transaction holds, as
// "step:from>to".
func transitionsOf(actions []table.TxAction) []string {
	var out []string
	for _, a := range actions {
		put, ok := a.(table.TxPut)
		if !ok || !strings.HasPrefix(put.Item.Key().SK, "TRANSITION#") {
			continue
		}
		data, _ := put.Item["data"].(map[string]any)
		out = append(out, fmt.Sprintf("%v:%v>%v", data["step"], data["from"], data["to"]))
	}
	return out
}

// On the embedded engine a document step's completion is recorded in the
// same transaction as the next step's start, and still audited on its own
// with its own time: the history reads exactly as if each change had been
// written alone.
func TestStepCompletionIsRecordedWithTheNextStart(t *testing.T) {
	t.Parallel()
	log := &txLog{}
	b := setupWrapped(t, func(s blob.Store) blob.Store { return s }, func(tb table.Table) table.Table { log.Table = tb; return log })
	repo, ig := b.repo, b.ingester
	ctx := context.Background()
	r, err := ig.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: "a.txt", FileURI: "a.txt", Body: strings.NewReader("One page of text about Hamburg.\n")})
	if err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	log.txs = nil
	log.mu.Unlock()
	if err := b.engine.Run(ctx, ig.Definition, 0, ig.ExecutionInput(r)); err != nil {
		t.Fatal(err)
	}

	var together []string
	for _, tx := range log.txs {
		together = append(together, strings.Join(transitionsOf(tx), " + "))
	}
	for _, want := range []string{
		"segment_prep:in_progress>completed + format_parser:pending>in_progress",
		"format_parser:in_progress>completed + ocr:pending>in_progress",
		"ocr:in_progress>completed + segment_builder:pending>in_progress",
		"segment_builder:in_progress>completed + segment_analyzer:pending>in_progress",
		"graph_builder:in_progress>completed + document_summarizer:pending>in_progress",
	} {
		if !slices.Contains(together, want) {
			t.Errorf("no transaction records %q; transactions:\n%s", want, strings.Join(together, "\n"))
		}
	}

	// The last step's completion rides on the workflow's outcome, with
	// the outcome event.
	outcome := false
	for _, tx := range log.txs {
		if !slices.Contains(transitionsOf(tx), "document_summarizer:in_progress>completed") {
			continue
		}
		for _, a := range tx {
			if put, ok := a.(table.TxPut); ok && strings.HasPrefix(put.Item.Key().SK, "EVENT#") {
				outcome = true
			}
		}
	}
	if !outcome {
		t.Error("document_summarizer's completion is not in the transaction that completes the workflow")
	}

	history, err := repo.ListTransitions(ctx, r.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	started, ended := map[string]string{}, map[string]string{}
	for i, tr := range history {
		if i > 0 && tr.At < history[i-1].At {
			t.Errorf("transition %d (%s %s>%s at %s) is older than the one before (%s)", i, tr.Step, tr.From, tr.To, tr.At, history[i-1].At)
		}
		switch tr.To {
		case pipeline.StepInProgress:
			started[tr.Step] = tr.At
		case pipeline.StepCompleted:
			ended[tr.Step] = tr.At
		}
	}
	prog, err := repo.GetProgress(ctx, r.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Status != pipeline.WorkflowCompleted {
		t.Fatalf("workflow %s (%s)", prog.Status, prog.Error)
	}
	for _, st := range pipelinefile.Default().Stages {
		if started[st.Name] == "" || ended[st.Name] == "" {
			t.Errorf("%s: started %q, completed %q", st.Name, started[st.Name], ended[st.Name])
		}
		if got := prog.Steps[st.Name]; got.Status != pipeline.StepCompleted || got.EndedAt != ended[st.Name] {
			t.Errorf("%s: step item says %s, ended %s; the audit says completed at %s", st.Name, got.Status, got.EndedAt, ended[st.Name])
		}
	}
}

// putHook calls onPut before each Put it passes on.
type putHook struct {
	blob.Store
	onPut func(key string)
}

func (h *putHook) Put(ctx context.Context, key string, r io.Reader) error {
	h.onPut(key)
	return h.Store.Put(ctx, key, r)
}

// The next step starts from the step item the step before kept, not a
// fresh read: when something else changes the workflow in between (here
// another process fails it while a step runs), the start's condition on
// the workflow's status fails, the step reads the item again and does not
// run; the step that finished is still recorded complete. The same holds
// for finalize, whose joint write of the last completion and the outcome
// fails and falls back to a fresh read.
func TestKeptStepItemIsCheckedAtTheNextStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		during, finished, next string // the blob written by the step during which it fails
	}{
		{"/doc.json", pipeline.StepFormatParser, pipeline.StepOCR},
		{"/summary.json", pipeline.StepDocumentSummarizer, ""},
	} {
		t.Run(tc.finished, func(t *testing.T) {
			t.Parallel()
			var (
				repo *pipeline.Repository
				ref  pipeline.WorkflowRef
				once sync.Once
			)
			hook := &putHook{onPut: func(key string) {
				if !strings.HasSuffix(key, tc.during) {
					return
				}
				once.Do(func() {
					if _, err := repo.SetWorkflowStatus(context.Background(), ref, []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowFailed, "stopped by another process"); err != nil {
						t.Error(err)
					}
				})
			}}
			b := setupWith(t, func(s blob.Store) blob.Store { hook.Store = s; return hook })
			repo = b.repo
			ctx := context.Background()
			r, err := b.ingester.Register(ctx, pipeline.IngestRequest{ProjectID: "p", FileName: "a.txt", FileURI: "a.txt", Body: strings.NewReader("One page of text.\n")})
			if err != nil {
				t.Fatal(err)
			}
			ref = r.Ref()
			if _, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, ""); err != nil {
				t.Fatal(err)
			}
			runErr := b.engine.Run(ctx, b.ingester.Definition, 0, b.ingester.ExecutionInput(r))
			prog, err := repo.GetProgress(ctx, ref.WorkflowID)
			if err != nil {
				t.Fatal(err)
			}
			if prog.Status != pipeline.WorkflowFailed || prog.Error != "stopped by another process" {
				t.Errorf("workflow %s (%q), want failed by the other process; run: %v", prog.Status, prog.Error, runErr)
			}
			if tc.next != "" {
				if st := prog.Steps[tc.next].Status; st != pipeline.StepPending {
					t.Errorf("%s is %s: it started on a workflow failed meanwhile", tc.next, st)
				}
			}
			if st := prog.Steps[tc.finished].Status; st != pipeline.StepCompleted {
				t.Errorf("%s is %s; it finished, and its completion must not be lost", tc.finished, st)
			}
		})
	}
}
