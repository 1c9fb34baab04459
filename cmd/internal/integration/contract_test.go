//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/contract"
	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

func TestMain(m *testing.M) {
	if os.Getenv(contract.FakeStageEnv) == "1" {
		os.Exit(contract.RunCommand(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// contractCases is how many generated cases run on Step Functions: few,
// since the emulator is slow, and half as many with -short. They are the
// first cases, by seed from 1, that have a fault (small seeds draw small
// cases, most without one).
func contractCases() int {
	if testing.Short() {
		return 4
	}
	return 8
}

// contractOnStepFunctions is what the generator draws for the emulator:
// only what moto runs as Step Functions does (statemachine/interp/DIFFERENCES.md).
//
//   - No faults on document stages that run beside another: such stages
//     are branches of a Parallel state, and moto's Parallel does not catch
//     a branch's error (row parallel_branch_failure_cancels, line 50), so the
//     execution would fail without recording the workflow's failure.
//     Segment stages side by side are branches too, but inside the batch
//     where no Parallel catches anything: the error goes to the Map, as on
//     Step Functions.
//   - Permanent faults only. A segment batch that runs out of retries
//     fails its item of the Distributed Map, and moto ignores failed
//     items (row distributed_map_no_tolerance, line 37): the workflow
//     completes where Step Functions and the embedded engine fail it.
//     (moto 5.2.1 also read a document stage whose retry absorbed its
//     transient fault as failed; 5.2.5, which CI installs, did not in
//     these cases.)
func contractOnStepFunctions() contract.Options {
	return contract.Options{MaxStages: 5, MaxDocs: 2, BatchMode: true, PermanentFaultsOnly: true, LoneDocumentFaults: true}
}

// The same generated pipelines and faults end alike on Step Functions and
// on the embedded engine: each document's workflow status, every step's
// status, every segment's status and the stage outputs, and both agree
// with the contract's oracle where it is sure.
func TestContractOnStepFunctions(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Command stages get the variables their env: lists name from the
	// worker's environment (this process) and from docpipe's.
	t.Setenv(contract.FakeStageEnv, "1")
	svc := contract.NewService()
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	d := deploy(t, deployOptions{})
	gen := contract.Generator(contractOnStepFunctions())
	for seed, ran := 1, 0; ran < contractCases(); seed++ {
		c := gen.Example(seed)
		if len(c.Faults) == 0 {
			continue
		}
		ran++
		// Each case is a pipeline of its own, so its documents (named alike
		// in every case) start workflows of their own.
		c.Name = fmt.Sprintf("contract-%d", seed)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			run := func(engine string) caseRun {
				id := c.Name + "-" + engine
				ep := contract.Endpoints{Command: []string{self}, CommandEnv: []string{contract.FakeStageEnv}, HTTP: srv.URL + "/" + id}
				return caseRun{c: &c, dir: t.TempDir(), svc: svc, id: id, ep: ep}
			}
			onAWS := run("sfn").onStepFunctions(t, d)
			embeddedResults := run("embedded").embedded(t)
			for _, doc := range c.Docs {
				got, want := onAWS[doc.Name], embeddedResults[doc.Name]
				compareContractResults(t, doc.Name, got, want)
				// moto drops a SendTaskFailure's cause (DIFFERENCES.md, row
				// uncaught_task_error, line 60), which names the failed stage; the
				// workflow's error holds only the error's name there.
				checkOracle(t, &c, doc, "Step Functions", got, false)
				checkOracle(t, &c, doc, "embedded", want, true)
			}
			if t.Failed() {
				t.Logf("case (seed %d):\n%s", seed, c.String())
			}
		})
	}
}

// caseRun is one run of a case: its folder (documents, fault plan,
// pipeline file, the fakes' call counts) and its path id on the fake
// HTTP service.
type caseRun struct {
	c   *contract.Case
	dir string
	svc *contract.Service
	id  string
	ep  contract.Endpoints
}

// prepare writes the plan, the documents and the pipeline file and loads
// the pipeline.
func (r caseRun) prepare(t *testing.T) (pipeline.Definition, []string) {
	t.Helper()
	state := filepath.Join(r.dir, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	plan := contract.NewPlan(r.c, state)
	r.svc.Register(r.id, plan)
	t.Cleanup(func() { r.svc.Forget(r.id) })
	raw, _ := json.Marshal(plan)
	planPath := filepath.Join(r.dir, "plan.json")
	file := filepath.Join(r.dir, "pipeline.yaml")
	writeFile(t, planPath, raw)
	writeFile(t, file, []byte(r.c.PipelineYAML(r.ep, planPath)))
	var docs []string
	for _, d := range r.c.Docs {
		p := filepath.Join(r.dir, d.Name)
		writeFile(t, p, []byte(contract.DocText(d)))
		docs = append(docs, p)
	}
	def, err := pipelinefile.Load(file)
	if err == nil {
		err = pipelinefile.Validate(def, pipelinefile.TargetAWS)
	}
	if err != nil {
		t.Fatalf("the generated pipeline is not valid on AWS: %v\n%s", err, r.c.String())
	}
	return def, docs
}

func writeFile(t *testing.T, path string, body []byte) {
	t.Helper()
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
}

// onStepFunctions applies and deploys the case's pipeline, uploads its
// documents, waits for every execution and reads what each left.
func (r caseRun) onStepFunctions(t *testing.T, d *deployment) map[string]contractResults {
	t.Helper()
	def, docs := r.prepare(t)
	version, arn := d.deployPipeline(t, def)
	in := s3ingest.Ingest{
		Ingester: &pipeline.Ingester{Repo: d.B.Repo, Blobs: d.B.Blobs, Definition: def, Bucket: d.Bucket},
		Executor: &sfn.Executor{API: d.SFN, StateMachineARN: arn, Repo: d.B.Repo},
		Project:  project, Pipeline: def.Name, PipelineVersion: version,
	}
	// One execution at a time: moto fails StartExecution on a state
	// machine that has one running (it deep-copies the machine, lock and
	// all).
	out := map[string]contractResults{}
	for _, path := range docs {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		key := backend.DefaultIncomingPrefix + def.Name + "/" + filepath.Base(path)
		res := d.uploadWith(t, in, key, body)
		d.wait(t, res.ExecutionID)
		out[filepath.Base(path)] = readContractResults(t, d.B, r.c, res.Registration)
	}
	return out
}

// embedded runs the case's documents on the embedded engine in a fresh
// local home.
func (r caseRun) embedded(t *testing.T) map[string]contractResults {
	t.Helper()
	def, docs := r.prepare(t)
	local, err := backend.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	out := map[string]contractResults{}
	for i, reg := range runUserPipelineEmbedded(t, local, def, docs) {
		out[filepath.Base(docs[i])] = readContractResults(t, local, r.c, reg)
	}
	return out
}

// contractResults are what one workflow of a case left in the table and
// the bucket.
type contractResults struct {
	status   pipeline.WorkflowStatus
	err      string
	steps    map[string]pipeline.StepStatus
	segments map[int]pipeline.Segment
	// outputs are the users' stages' outputs: a document stage's JSON, a
	// segment stage's batch files.
	outputs map[string]string
}

func readContractResults(t *testing.T, b *backend.Backend, c *contract.Case, r pipeline.Registration) contractResults {
	t.Helper()
	ctx := context.Background()
	prog, err := b.Repo.GetProgress(ctx, r.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	res := contractResults{status: prog.Status, err: prog.Error, steps: map[string]pipeline.StepStatus{}, segments: map[int]pipeline.Segment{}, outputs: map[string]string{}}
	for name, s := range prog.Steps {
		res.steps[name] = s.Status
	}
	segs, _, err := b.Repo.ListSegments(ctx, r.Workflow.ID, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		res.segments[s.Index] = s
	}
	ref := r.Ref()
	for _, st := range c.Stages {
		if st.Kind == contract.KindBuiltin {
			continue
		}
		if raw, err := blob.GetBytes(ctx, b.Blobs, pipeline.StageOutputBlobKey(ref, st.Name), 1<<20); err == nil {
			res.outputs[st.Name] = string(raw)
		}
		for batch := 1; ; batch++ {
			raw, err := blob.GetBytes(ctx, b.Blobs, pipeline.StageBatchBlobKey(ref, st.Name, batch), 1<<20)
			if err != nil {
				break
			}
			res.outputs[fmt.Sprintf("%s batch %d", st.Name, batch)] = string(raw)
		}
	}
	return res
}

// compareContractResults: the two engines end a workflow alike.
func compareContractResults(t *testing.T, doc string, got, want contractResults) {
	t.Helper()
	if got.status != want.status {
		t.Errorf("%s: %s on Step Functions (%q), %s embedded (%q)", doc, got.status, got.err, want.status, want.err)
	}
	if !maps.Equal(got.steps, want.steps) {
		t.Errorf("%s: steps %v on Step Functions, %v embedded", doc, got.steps, want.steps)
	}
	for _, i := range slices.Sorted(maps.Keys(want.segments)) {
		g, w := got.segments[i], want.segments[i]
		if g.Status != w.Status || g.Stage != w.Stage || g.Error != w.Error {
			t.Errorf("%s: segment %d is %s by %q (%q) on Step Functions, %s by %q (%q) embedded", doc, i, g.Status, g.Stage, g.Error, w.Status, w.Stage, w.Error)
		}
	}
	if len(got.segments) != len(want.segments) {
		t.Errorf("%s: %d segments on Step Functions, %d embedded", doc, len(got.segments), len(want.segments))
	}
	if !maps.Equal(got.outputs, want.outputs) {
		t.Errorf("%s: stage outputs differ\non Step Functions: %v\nembedded:          %v", doc, got.outputs, want.outputs)
	}
}

// checkOracle holds a run to what the contract's oracle is sure of: the
// workflow's status and (withCause) what its error names, each segment's
// status and the stage that failed it, and each certainly answered
// document stage's output.
func checkOracle(t *testing.T, c *contract.Case, doc contract.Doc, engine string, got contractResults, withCause bool) {
	t.Helper()
	want := c.Expect(doc)
	if want.Status != contract.StatusUnknown && string(got.status) != want.Status {
		t.Errorf("%s on %s: workflow is %s (%q), the oracle says %s (causes %v)", doc.Name, engine, got.status, got.err, want.Status, want.Causes)
	}
	if withCause && want.Status == contract.StatusFailed && got.status == pipeline.WorkflowFailed && !namesOneOf(got.err, want.Causes) {
		t.Errorf("%s on %s: workflow error %q names none of %v", doc.Name, engine, got.err, want.Causes)
	}
	if want.SegmentsKnown {
		for i := 1; i <= doc.Sections; i++ {
			seg := got.segments[i]
			by, failed := want.Segments[i]
			switch {
			case failed && (seg.Status != pipeline.SegmentFailed || !slices.Contains(by, seg.Stage)):
				t.Errorf("%s on %s: segment %d is %s by %q, the oracle says failed by one of %v", doc.Name, engine, i, seg.Status, seg.Stage, by)
			case !failed && seg.Status == pipeline.SegmentFailed:
				t.Errorf("%s on %s: segment %d failed by %q (%q), the oracle says done", doc.Name, engine, i, seg.Stage, seg.Error)
			}
		}
	}
	for _, k := range want.Succeeded {
		if st, _ := c.Stage(k.Stage); st.Scope != contract.ScopeDocument {
			continue
		}
		if !jsonSame(got.outputs[k.Stage], string(contract.Answer(k))) {
			t.Errorf("%s on %s: stage %s answered %q, want %s", doc.Name, engine, k.Stage, got.outputs[k.Stage], contract.Answer(k))
		}
	}
}

// namesOneOf reports whether a workflow error names one of the oracle's
// causes (a stage, as "stage: ...", or every segment failing).
func namesOneOf(msg string, causes []string) bool {
	return slices.ContainsFunc(causes, func(c string) bool {
		return c == contract.AllSegmentsFailed && strings.Contains(msg, "segments failed") || strings.Contains(msg, c+":")
	})
}

func jsonSame(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}
