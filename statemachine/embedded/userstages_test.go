package embedded_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/extract/pdftext"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/steps"
	"github.com/docpipe/docpipe/statemachine/embedded"
)

// userRig runs one user's pipeline (as version 1) beside the default one,
// on a scratch SQLite home.
type userRig struct {
	repo     *pipeline.Repository
	blobs    blob.Store
	ingester *pipeline.Ingester
	engine   *embedded.Engine
	def      pipeline.Definition
}

func newUserRig(t *testing.T, def pipeline.Definition) userRig {
	t.Helper()
	return newUserRigWith(t, def, ai.Clients{Getenv: os.Getenv})
}

// newUserRigWith is newUserRig whose analysis stages make their models
// through models.
func newUserRigWith(t *testing.T, def pipeline.Definition, models ai.Models) userRig {
	t.Helper()
	if err := pipelinefile.Validate(def, pipelinefile.TargetEmbedded); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
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
	pdf, err := pdftext.New("go")
	if err != nil {
		t.Fatal(err)
	}
	pipes := pipeline.NewStaticPipelines(pipelinefile.Default())
	pipes.Add(def.Name, 1, def)
	reg := pipeline.NewRegistry()
	rec := pipeline.BatchRecorder(repo)
	steps.Register(reg, steps.Deps{Repo: repo, Blobs: blobs, Pipelines: pipes, PDF: pdf, TempDir: dir, AIModels: models, Recorder: rec})
	eng, err := embedded.New(reg, blobs, embedded.Options{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	ig := &pipeline.Ingester{Repo: repo, Blobs: blobs, Definition: def, Bucket: "local"}
	if err := ig.EnsureProject(context.Background(), "p", "p"); err != nil {
		t.Fatal(err)
	}
	return userRig{repo: repo, blobs: blobs, ingester: ig, engine: eng, def: def}
}

func (r userRig) run(t *testing.T, path string) (pipeline.WorkflowRef, pipeline.StepProgress) {
	t.Helper()
	ctx := context.Background()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reg, err := r.ingester.Register(ctx, pipeline.IngestRequest{
		ProjectID: "p", FileName: filepath.Base(path), FileURI: path, Body: f,
		Pipeline: r.def.Name, PipelineVersion: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	runErr := r.engine.Run(ctx, r.def, 1, r.ingester.ExecutionInput(reg))
	prog, err := r.repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s on %s: run error %v, status %s, error %q, segments %d/%d/%d/%d", r.def.Name, path, runErr, prog.Status, prog.Error,
		prog.TotalSegments, prog.SegmentsDone, prog.SegmentsFailed, prog.SegmentsSkipped)
	return reg.Ref(), prog
}

func (r userRig) blob(t *testing.T, key string) string {
	t.Helper()
	b, err := blob.GetBytes(context.Background(), r.blobs, key, 64<<20)
	if err != nil {
		t.Fatalf("blob %s: %v", key, err)
	}
	return string(b)
}

// copyDir copies a sample pipeline's folder, so its commands write their
// files in a scratch folder rather than in the source tree.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// writePipeline writes a pipeline file and its scripts into a scratch
// folder and loads it.
func writePipeline(t *testing.T, yaml string, scripts map[string]string) pipeline.Definition {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := pipelinefile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return def
}

func sample(name string) string { return filepath.Join("..", "..", "samples", "docs", name) }

func wantCompleted(t *testing.T, prog pipeline.StepProgress) {
	t.Helper()
	if prog.Status != pipeline.WorkflowCompleted {
		t.Fatalf("status %s (%s), steps %+v", prog.Status, prog.Error, prog.Steps)
	}
	for name, st := range prog.Steps {
		if st.Status != pipeline.StepCompleted && st.Status != pipeline.StepSkipped && name != pipeline.StepFinalize && name != pipeline.StepWorkflowFailed {
			t.Errorf("step %s is %s", name, st.Status)
		}
	}
	if prog.SegmentsDone+prog.SegmentsSkipped+prog.SegmentsFailed != prog.TotalSegments || prog.SegmentsDone == 0 {
		t.Errorf("segments: %d done, %d failed, %d skipped of %d", prog.SegmentsDone, prog.SegmentsFailed, prog.SegmentsSkipped, prog.TotalSegments)
	}
}

// search-export's command reads every segment's text as JSON Lines and
// writes its chunks next to the pipeline file.
func TestSearchExportSampleWritesChunks(t *testing.T) {
	t.Parallel()
	dir := copyDir(t, "../../samples/pipelines/search-export")
	def, err := pipelinefile.Load(filepath.Join(dir, "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := newUserRig(t, def)
	ref, prog := r.run(t, sample("notes.md"))
	wantCompleted(t, prog)
	var out struct {
		Path   string `json:"path"`
		Chunks int    `json:"chunks"`
	}
	if err := json.Unmarshal([]byte(r.blob(t, pipeline.StageOutputBlobKey(ref, "search_export"))), &out); err != nil || out.Chunks == 0 {
		t.Fatalf("search_export output %+v, %v", out, err)
	}
	chunks, err := os.ReadFile(filepath.Join(dir, "exports", ref.WorkflowID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(chunks), "\n"); n != out.Chunks || !strings.Contains(string(chunks), "olga.petrova@falcon.example") {
		t.Errorf("%d chunk lines for %d chunks: %.300s", n, out.Chunks, chunks)
	}
}

// http-enrich's enrich stage (served here by a test server) runs beside
// graph_builder, and document_summarizer joins both.
func TestHTTPEnrichSampleJoinsTwoBranches(t *testing.T) {
	t.Parallel()
	requests := make(chan map[string]any, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body map[string]any
		raw, _ := io.ReadAll(req.Body)
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		requests <- body
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"words": 42}`)
	}))
	defer srv.Close()
	def, err := pipelinefile.Load("../../samples/pipelines/http-enrich/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := range def.Stages {
		if def.Stages[i].Run.HTTP != "" {
			def.Stages[i].Run.HTTP = srv.URL + "/enrich"
		}
	}
	r := newUserRig(t, def)
	ref, prog := r.run(t, sample("report.docx"))
	wantCompleted(t, prog)
	if got := r.blob(t, pipeline.StageOutputBlobKey(ref, "enrich")); got != `{"words": 42}` {
		t.Errorf("enrich output %s", got)
	}
	body := <-requests
	needs, _ := body["inputs_inline"].(map[string]any)["needs"].(map[string]any)
	segs, _ := needs["segment_analyzer"].([]any)
	if len(segs) != prog.TotalSegments {
		t.Errorf("enrich got %d segments inline, want %d: %v", len(segs), prog.TotalSegments, body["inputs_inline"])
	}
	doc, _ := body["document"].(map[string]any)
	if doc["format"] != "docx" || doc["file_name"] != "report.docx" || doc["language"] != "en" {
		t.Errorf("document %v", doc)
	}
	enrich, graph, summary := prog.Steps["enrich"], prog.Steps[pipeline.StepGraphBuilder], prog.Steps[pipeline.StepDocumentSummarizer]
	if summary.StartedAt < enrich.EndedAt || summary.StartedAt < graph.EndedAt {
		t.Errorf("document_summarizer started at %s, before enrich (%s) or graph_builder (%s) ended", summary.StartedAt, enrich.EndedAt, graph.EndedAt)
	}
}

// Two command stages with no path between them run as a Parallel
// state's branches; a third needs both and reads both outputs.
func TestCommandDAGJoinsBranches(t *testing.T) {
	t.Parallel()
	def := writePipeline(t, `
name: dag
stages:
  - name: left
    run: {command: [python3, echo.py, left]}
  - name: right
    run: {command: [python3, echo.py, right]}
  - name: join
    needs: [left, right]
    run: {command: [python3, join.py]}
  - name: segment_analyzer
    needs: [join]
    scope: segment
    run: {builtin: segment_analyzer}
`, map[string]string{
		"echo.py": "import json, sys\nreq = json.load(sys.stdin)\njson.dump({'side': sys.argv[1], 'pages': req['document']['pages']}, sys.stdout)\n",
		"join.py": "import json, sys\nreq = json.load(sys.stdin)\nout = {}\nfor name, path in sorted(req['inputs']['needs'].items()):\n    out[name] = json.load(open(path))\njson.dump(out, sys.stdout)\n",
	})
	r := newUserRig(t, def)
	ref, prog := r.run(t, sample("letter.txt"))
	wantCompleted(t, prog)
	var joined map[string]map[string]any
	if err := json.Unmarshal([]byte(r.blob(t, pipeline.StageOutputBlobKey(ref, "join"))), &joined); err != nil {
		t.Fatal(err)
	}
	if joined["left"]["side"] != "left" || joined["right"]["side"] != "right" || joined["left"]["pages"] != float64(prog.TotalSegments) {
		t.Errorf("join read %v", joined)
	}
}

// A stage that exits 75 (try again later) is retried by the state
// machine, and the retry succeeds.
func TestTransientStageFailureIsRetried(t *testing.T) {
	t.Parallel()
	def := writePipeline(t, `
name: flaky
stages:
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: flaky
    needs: [segment_analyzer]
    run: {command: [python3, flaky.py]}
    retry: {attempts: 3, interval: 1s, backoff: 1.0}
`, map[string]string{
		"flaky.py": `import json, os, sys
req = json.load(sys.stdin)
marker = os.path.join(os.getcwd(), "failed-once")
if not os.path.exists(marker):
    open(marker, "w").close()
    print("busy, try later", file=sys.stderr)
    sys.exit(75)
json.dump({"words": sum(len(s["text"].split()) for s in map(json.loads, open(req["inputs"]["needs"]["segment_analyzer"])))}, sys.stdout)
`,
	})
	r := newUserRig(t, def)
	ref, prog := r.run(t, sample("letter.txt"))
	wantCompleted(t, prog)
	if _, err := os.Stat(filepath.Join(def.Dir, "failed-once")); err != nil {
		t.Fatalf("the stage never failed: %v", err)
	}
	transitions, err := r.repo.ListTransitions(context.Background(), ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, tr := range transitions {
		if tr.Step == "flaky" {
			path = append(path, string(tr.To))
		}
	}
	if got := strings.Join(path, " "); got != "in_progress failed in_progress completed" {
		t.Errorf("flaky went through %s", got)
	}
	if out := r.blob(t, pipeline.StageOutputBlobKey(ref, "flaky")); !strings.Contains(out, `"words"`) || strings.Contains(out, `"words": 0`) {
		t.Errorf("flaky output %s", out)
	}
}

// A document stage that fails permanently fails the workflow; its step
// records the reason with the tail of the command's stderr.
func TestPermanentStageFailureFailsTheWorkflow(t *testing.T) {
	t.Parallel()
	def := writePipeline(t, `
name: broken
stages:
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: check
    needs: [segment_analyzer]
    run: {command: [python3, check.py]}
`, map[string]string{
		"check.py": "import sys\nprint('ValueError: the ledger does not balance', file=sys.stderr)\nsys.exit(3)\n",
	})
	r := newUserRig(t, def)
	_, prog := r.run(t, sample("letter.txt"))
	if prog.Status != pipeline.WorkflowFailed {
		t.Fatalf("status %s, want failed", prog.Status)
	}
	st := prog.Steps["check"]
	if st.Status != pipeline.StepFailed || !strings.Contains(st.Error, "exit status 3") || !strings.Contains(st.Error, "the ledger does not balance") {
		t.Errorf("check: %+v", st)
	}
	if !strings.Contains(prog.Error, "the ledger does not balance") {
		t.Errorf("workflow error %q", prog.Error)
	}
}

// A stage whose `when` does not match the document is skipped, with the
// reason, and the stages after it still run.
func TestWhenSkipsAStageWithTheReason(t *testing.T) {
	t.Parallel()
	def := writePipeline(t, `
name: pdfonly
stages:
  - name: pdf_check
    needs: [segment_builder]
    when: {format: [pdf, docx]}
    run: {command: [python3, fail.py]}
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: english
    needs: [segment_analyzer]
    when: {language: [en]}
    run: {command: [python3, ok.py]}
`, map[string]string{
		"fail.py": "import sys\nsys.exit(3)\n",
		"ok.py":   "print('{}')\n",
	})
	def.BatchSize = 2
	r := newUserRig(t, def)
	ref, prog := r.run(t, sample("letter.txt"))
	wantCompleted(t, prog)
	for name, reason := range map[string]string{
		"pdf_check": "when: format text is not one of pdf, docx",
	} {
		if st := prog.Steps[name]; st.Status != pipeline.StepSkipped || st.Error != reason {
			t.Errorf("%s: %+v, want skipped with %q", name, st, reason)
		}
	}
	if st := prog.Steps["english"]; st.Status != pipeline.StepCompleted {
		t.Errorf("english: %+v", st)
	}
	var doc pipeline.DocAttrs
	if err := json.Unmarshal([]byte(r.blob(t, pipeline.DocAttrsBlobKey(ref))), &doc); err != nil || doc.Format != "text" || doc.Language != "en" || doc.Pages != prog.TotalSegments {
		t.Errorf("doc.json %+v, %v", doc, err)
	}
}

// The redact sample replaces e-mail addresses before analysis: the
// analyzer, graph and summary never see them, while the original segment
// text stays as it was.
func TestRedactSampleHidesAddressesFromTheAnalysis(t *testing.T) {
	t.Parallel()
	def, err := pipelinefile.Load(filepath.Join(copyDir(t, "../../samples/pipelines/redact"), "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	def.BatchSize = 2
	r := newUserRig(t, def)
	const address = "anna.braendli@sitzwerk.example"
	ref, prog := r.run(t, sample("letter.txt"))
	wantCompleted(t, prog)
	if st := prog.Steps["redact"]; st.Status != pipeline.StepCompleted {
		t.Errorf("redact is %s", st.Status)
	}
	var original, analysis strings.Builder
	for i := 1; i <= prog.TotalSegments; i++ {
		original.WriteString(r.blob(t, pipeline.SegmentTextBlobKey(ref, i)))
	}
	for b := 1; b <= (prog.TotalSegments+1)/2; b++ {
		analysis.WriteString(r.blob(t, pipeline.BatchAnalysisBlobKey(ref, b)))
		if lines := r.blob(t, pipeline.StageBatchBlobKey(ref, "redact", b)); !strings.Contains(lines, `"redacted"`) {
			t.Errorf("batch %d: redact's output %s", b, lines)
		}
	}
	if !strings.Contains(original.String(), address) {
		t.Fatalf("the original segment text lost %s", address)
	}
	for _, out := range []string{analysis.String(), r.blob(t, pipeline.GraphBlobKey(ref)), r.blob(t, pipeline.SummaryBlobKey(ref))} {
		if strings.Contains(out, "sitzwerk.example") {
			t.Errorf("the analysis saw the address: %.300s", out)
		}
	}
	if !strings.Contains(analysis.String(), "[EMAIL]") {
		t.Errorf("the analysis did not see the redacted text")
	}
}

// A segment stage failing one segment permanently fails that segment only;
// the analyzer leaves it alone and the others complete.
func TestPermanentSegmentFailureFailsOnlyThatSegment(t *testing.T) {
	t.Parallel()
	def := writePipeline(t, `
name: picky
stages:
  - name: picky
    scope: segment
    run: {command: [python3, picky.py]}
  - name: segment_analyzer
    needs: [picky]
    run: {builtin: segment_analyzer}
`, map[string]string{
		"picky.py": `import json, sys
req = json.load(sys.stdin)
if req["segment"]["index"] == 1:
    print("segment 1 is not allowed", file=sys.stderr)
    sys.exit(3)
json.dump({"ok": True}, sys.stdout)
`,
	})
	def.BatchSize = 2
	r := newUserRig(t, def)
	ref, prog := r.run(t, sample("notes.md"))
	if prog.Status != pipeline.WorkflowCompleted || prog.SegmentsFailed != 1 || prog.SegmentsDone != prog.TotalSegments-1 {
		t.Fatalf("status %s, %d done, %d failed of %d", prog.Status, prog.SegmentsDone, prog.SegmentsFailed, prog.TotalSegments)
	}
	seg, err := r.repo.GetSegment(context.Background(), ref.WorkflowID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if seg.Status != pipeline.SegmentFailed || !strings.Contains(seg.Error, "segment 1 is not allowed") {
		t.Errorf("segment 1: %+v", seg)
	}
	if strings.Contains(r.blob(t, pipeline.BatchAnalysisBlobKey(ref, 1)), `"index":1,"status":"done"`) {
		t.Errorf("the analyzer analysed the failed segment")
	}
}

// A pipeline without any segment stage still gives every segment its final
// status (finalize closes them) and completes.
func TestPipelineWithoutSegmentStagesCompletes(t *testing.T) {
	t.Parallel()
	def := writePipeline(t, `
name: document-only
stages:
  - name: count
    run: {command: [python3, count.py]}
`, map[string]string{
		"count.py": "import json, sys\nreq = json.load(sys.stdin)\njson.dump({'pages': req['document']['pages']}, sys.stdout)\n",
	})
	r := newUserRig(t, def)
	_, prog := r.run(t, sample("letter.txt"))
	wantCompleted(t, prog)
	if prog.TotalSegments == 0 || prog.SegmentsDone != prog.TotalSegments {
		t.Errorf("segments: %d done of %d", prog.SegmentsDone, prog.TotalSegments)
	}
}
