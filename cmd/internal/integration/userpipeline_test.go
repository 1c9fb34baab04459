//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/pipelinedeploy"
	"github.com/docpipe/docpipe/cmd/internal/pipelineroute"
	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/embedded"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// userPipeline is a pipeline of users' stages: a segment command, two
// document branches at once (a command and an HTTP service), a stage its `when` skips for text, and a stage that
// fails transiently once per workflow (exit 75, retried) and for good on a
// file named bad.txt. It stands at the top level, not in a branch: moto's
// Parallel does not catch a branch's error (statemachine/interp/DIFFERENCES.md).
const userPipeline = `name: it-user
batch_size: 2
stages:
  - name: count
    scope: segment
    needs: [segment_builder]
    run: {command: [python3, -c, "import json,sys; r=json.load(sys.stdin); s=r['segment']; print(json.dumps({'index': s['index'], 'words': len(s['text'].split())}))"]}
    timeout: 60s
  - name: segment_analyzer
    needs: [count]
    run: {builtin: segment_analyzer}
  - name: left
    needs: [segment_analyzer]
    run: {command: [python3, -c, "import json,sys; r=json.load(sys.stdin); print(json.dumps({'branch': 'left', 'file': r['document']['file_name']}))"]}
  - name: right
    needs: [segment_analyzer]
    run: {http: ENRICH_URL}
  - name: pdf_only
    needs: [segment_analyzer]
    when: {format: [pdf]}
    run: {command: [python3, -c, "print('{}')"]}
  - name: flaky
    needs: [left, right, pdf_only]
    retry: {attempts: 2, interval: 1s}
    run: {command: [python3, -c, "import json,os,sys; r=json.load(sys.stdin); mark='tried-'+r['workflow_id']\nif r['document']['file_name']=='bad.txt': sys.stderr.write('refusing bad.txt'); sys.exit(1)\nif not os.path.exists(mark): open(mark,'w').close(); sys.exit(75)\nprint(json.dumps({'after_retry': True}))"]}
`

// enrichServer is the HTTP stage "right": it answers with the document's
// page count.
func enrichServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Document struct{ Pages int } `json:"document"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `{"branch": "right", "pages": %d}`, req.Document.Pages)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// userStages are the stages whose outputs are compared.
var userStages = []string{"count", "left", "right", "pdf_only", "flaky"}

// A user's pipeline applied to AWS gets a state machine of its own; a
// document run through it on Step Functions and the queue worker ends with
// the same segments, stage outputs and step statuses as on the embedded
// engine: the worker resolves the workflow's version from the table and
// runs its command and HTTP stages. A permanent failure is recorded on its stage on both.
func TestUserPipelineThroughStepFunctions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(userPipeline, "ENRICH_URL", enrichServer(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := pipelinefile.Load(file)
	if err == nil {
		err = pipelinefile.Validate(def, pipelinefile.TargetAWS)
	}
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{filepath.Join(samplesDir, "notes.md"), filepath.Join(t.TempDir(), "bad.txt")}
	if err := os.WriteFile(docs[1], []byte("A document the last stage refuses.\n\nIt has two sections.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	d := deploy(t, deployOptions{})
	version, arn := d.deployPipeline(t, def)
	if got, err := pipelineroute.StateMachine(ctx, d.B.Repo, d.StateMachineARN, def.Name, version); err != nil || got != arn {
		t.Fatalf("the version's state machine is %q, %v; deployed %q", got, err, arn)
	}
	in := s3ingest.Ingest{
		Ingester: &pipeline.Ingester{Repo: d.B.Repo, Blobs: d.B.Blobs, Definition: def, Bucket: d.Bucket},
		Executor: &sfn.Executor{API: d.SFN, StateMachineARN: arn, Repo: d.B.Repo},
		Project:  project, Pipeline: def.Name, PipelineVersion: version,
	}
	var onAWS []pipeline.Registration
	for _, path := range docs {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		key := backend.DefaultIncomingPrefix + filepath.Base(path)
		res := d.uploadWith(t, in, key, body)
		if !strings.Contains(res.ExecutionID, ":execution:"+pipelinedeploy.StateMachineName(d.StateMachineARN, def.Name, version)+":") {
			t.Errorf("%s runs as %s, not on its version's state machine", path, res.ExecutionID)
		}
		d.wait(t, res.ExecutionID)
		onAWS = append(onAWS, res.Registration)
	}

	local, err := backend.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	embeddedRegs := runUserPipelineEmbedded(t, local, def, docs)

	for i, path := range docs {
		got, want := stageResults(t, d.B, onAWS[i]), stageResults(t, local, embeddedRegs[i])
		if got.status != want.status {
			t.Errorf("%s: %s on Step Functions, %s embedded", path, got.status, want.status)
		}
		for name, w := range want.steps {
			if got.steps[name] != w {
				t.Errorf("%s: step %s is %q on Step Functions, %q embedded", path, name, got.steps[name], w)
			}
		}
		if len(got.steps) != len(want.steps) {
			t.Errorf("%s: steps %v on Step Functions, %v embedded", path, got.steps, want.steps)
		}
		for key, w := range want.outputs {
			if got.outputs[key] != w {
				t.Errorf("%s: %s is %q on Step Functions, %q embedded", path, key, got.outputs[key], w)
			}
		}
		if len(got.outputs) != len(want.outputs) {
			t.Errorf("%s: %d stage outputs on Step Functions, %d embedded", path, len(got.outputs), len(want.outputs))
		}
	}

	good, bad := stageResults(t, d.B, onAWS[0]), stageResults(t, d.B, onAWS[1])
	if good.status != pipeline.WorkflowCompleted || good.steps["pdf_only"] != pipeline.StepSkipped || good.steps["flaky"] != pipeline.StepCompleted {
		t.Errorf("notes.md: %s, steps %v", good.status, good.steps)
	}
	if good.outputs["flaky"] != `{"after_retry": true}` {
		t.Errorf("the retried stage answered %q", good.outputs["flaky"])
	}
	if bad.status != pipeline.WorkflowFailed || bad.steps["flaky"] != pipeline.StepFailed {
		t.Errorf("bad.txt: %s, steps %v", bad.status, bad.steps)
	}
	if !strings.Contains(good.outputs["right"], `"branch": "right"`) || !strings.Contains(good.outputs["left"], `"branch": "left"`) {
		t.Errorf("branches answered %q and %q", good.outputs["left"], good.outputs["right"])
	}
	if len(good.outputs) < 4 {
		t.Errorf("notes.md: stage outputs %v", good.outputs)
	}
}

// runUserPipelineEmbedded runs files through def on the embedded engine.
func runUserPipelineEmbedded(t *testing.T, b *backend.Backend, def pipeline.Definition, files []string) []pipeline.Registration {
	t.Helper()
	ctx := context.Background()
	version, _, err := b.Repo.ApplyPipeline(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	rec := pipeline.BatchRecorder(b.Repo)
	reg, err := backend.Registry(b, backend.StepOptions{PDFBackend: "go", Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := embedded.New(reg, b.Blobs, embedded.Options{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	ig := &pipeline.Ingester{Repo: b.Repo, Blobs: b.Blobs, Definition: def, Bucket: b.Bucket}
	if err := ig.EnsureProject(ctx, project, project); err != nil {
		t.Fatal(err)
	}
	var regs []pipeline.Registration
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ig.Register(ctx, pipeline.IngestRequest{ProjectID: project, FileName: filepath.Base(path), FileURI: path, Body: f, Pipeline: def.Name, PipelineVersion: version})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Run(ctx, def, version, ig.ExecutionInput(r)); err != nil {
			t.Logf("%s: execution ended with %v", path, err)
		}
		regs = append(regs, r)
	}
	return regs
}

// userResults are what a user's pipeline left for one workflow: its
// status, every step's status, every segment's text and status, and the
// users' stages' outputs (document stages' JSON, segment stages' lines).
type userResults struct {
	status  pipeline.WorkflowStatus
	steps   map[string]pipeline.StepStatus
	outputs map[string]string
}

func stageResults(t *testing.T, b *backend.Backend, r pipeline.Registration) userResults {
	t.Helper()
	ctx := context.Background()
	prog, err := b.Repo.GetProgress(ctx, r.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	res := userResults{status: prog.Status, steps: map[string]pipeline.StepStatus{}, outputs: map[string]string{}}
	for name, s := range prog.Steps {
		res.steps[name] = s.Status
	}
	segs, _, err := b.Repo.ListSegments(ctx, r.Workflow.ID, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		text, err := blob.GetBytes(ctx, b.Blobs, s.TextKey, 1<<20)
		if err != nil {
			t.Fatalf("segment %d text: %v", s.Index, err)
		}
		res.outputs[fmt.Sprintf("segment %d", s.Index)] = string(s.Status) + ":" + string(text)
	}
	ref := r.Ref()
	for _, name := range userStages {
		if raw, err := blob.GetBytes(ctx, b.Blobs, pipeline.StageOutputBlobKey(ref, name), 1<<20); err == nil {
			res.outputs[name] = string(raw)
		}
		for batch := 1; ; batch++ {
			raw, err := blob.GetBytes(ctx, b.Blobs, pipeline.StageBatchBlobKey(ref, name, batch), 1<<20)
			if err != nil {
				break
			}
			res.outputs[fmt.Sprintf("%s batch %d", name, batch)] = string(raw)
		}
	}
	return res
}
