//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/pipelineroute"
	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// backfillPipeline is the example: an expensive segment stage a (each run
// appends the workflow's id to a.count in dir) and a document stage b that
// sums a's answers (b.count). label is b's setting.
func backfillPipeline(t *testing.T, dir, label string) pipeline.Definition {
	t.Helper()
	count := func(stage string) string {
		return fmt.Sprintf("open('%s','a').write(r['workflow_id']+' ')", filepath.Join(dir, stage+".count"))
	}
	body := `name: it-backfill
stages:
  - name: a
    scope: segment
    needs: [segment_builder]
    run: {command: [python3, -c, "import json,sys; r=json.load(sys.stdin); ` + count("a") + `; print(json.dumps({'words': len(r['segment']['text'].split())}))"]}
  - name: b
    needs: [a]
    run: {command: [python3, -c, "import json,sys; r=json.load(sys.stdin); ` + count("b") + `; print(json.dumps({'lines': len(open(r['inputs']['needs']['a']).read().splitlines()), 'label': r['settings']['label']}))"]}
    settings: {label: ` + label + `}
`
	file := filepath.Join(dir, label+".yaml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := pipelinefile.Load(file)
	if err == nil {
		err = pipelinefile.Validate(def, pipelinefile.TargetAWS)
	}
	if err != nil {
		t.Fatal(err)
	}
	return def
}

func countRuns(t *testing.T, dir, stage string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, stage+".count"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(strings.Fields(string(raw)))
}

// backfillFixture deploys docpipe with the example's first version and
// runs three documents on it, then deploys the second version (b's label
// changed) and limits the project to one running workflow.
func backfillFixture(t *testing.T) (d *deployment, dir string, ingest s3ingest.Ingest, v2def pipeline.Definition, v2 int, arn2 string) {
	t.Helper()
	ctx := t.Context()
	dir = t.TempDir()
	d = deploy(t, deployOptions{})
	v1def := backfillPipeline(t, dir, "one")
	v1, arn1 := d.deployPipeline(t, v1def)
	ingest = s3ingest.Ingest{
		Ingester: &pipeline.Ingester{Repo: d.B.Repo, Blobs: d.B.Blobs, Definition: v1def, Bucket: d.Bucket},
		Executor: &sfn.Executor{API: d.SFN, StateMachineARN: arn1, Repo: d.B.Repo},
		Project:  project, Pipeline: v1def.Name, PipelineVersion: v1,
	}
	for i, words := range []string{"apples and pears", "plums", "figs and dates"} {
		body := fmt.Sprintf("# One\n\nDocument %d: %s.\n\n# Two\n\nThe second section.\n", i, words)
		res := d.uploadWith(t, ingest, backend.DefaultIncomingPrefix+fmt.Sprintf("doc%d.md", i), []byte(body))
		if ex := d.wait(t, res.ExecutionID); ex.Status != "SUCCEEDED" {
			t.Fatalf("v1 execution %s %s %s", ex.Status, ex.Error, ex.Cause)
		}
	}
	if a, b := countRuns(t, dir, "a"), countRuns(t, dir, "b"); a != 6 || b != 3 {
		t.Fatalf("v1: a ran %d times, b %d; want 6 and 3", a, b)
	}
	v2def = backfillPipeline(t, dir, "two")
	v2, arn2 = d.deployPipeline(t, v2def)
	if _, err := d.B.Repo.UpdateProject(ctx, project, func(p *pipeline.Project) error {
		p.Settings.MaxConcurrentWorkflows = 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return d, dir, ingest, v2def, v2, arn2
}

// reconciler is the reconciler as the ingest function wires it: held
// workflows start on their version's state machine.
func (d *deployment) reconciler() *sfn.Reconciler {
	return &sfn.Reconciler{API: d.SFN, Repo: d.B.Repo, StateMachineARN: d.StateMachineARN, Bucket: d.Bucket,
		StateMachineOf: func(ctx context.Context, name string, version int) (string, error) {
			return pipelineroute.StateMachine(ctx, d.B.Repo, d.StateMachineARN, name, version)
		}}
}

// The example on Step Functions: a project of three documents
// backfilled onto a version that changes only b runs b three times and a
// not at all. The backfill starts its executions through the project's
// admission: with a limit of one running workflow, one starts and the
// others wait pending until the reconciler starts them.
func TestBackfillOnStepFunctions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	d, dir, ingest, v2def, v2, arn2 := backfillFixture(t)
	// What `docpipe backfill` does on AWS.
	items, err := d.B.Repo.PlanBackfill(ctx, project, v2def.Name, v2, pipeline.BackfillFilter{})
	if err != nil || len(items) != 3 {
		t.Fatalf("plan: %d items, %v", len(items), err)
	}
	if err := d.B.Repo.CreateBackfillWorkflows(ctx, items, v2, v2def.Stages, false); err != nil {
		t.Fatal(err)
	}
	ingest.Ingester.Definition, ingest.PipelineVersion = v2def, v2
	ingest.Executor = &sfn.Executor{API: d.SFN, StateMachineARN: arn2, Repo: d.B.Repo}
	var started []string
	held := 0
	for _, it := range items {
		res, err := ingest.Start(ctx, pipeline.Registration{Workflow: *it.Target})
		if err != nil {
			t.Fatal(err)
		}
		if res.Held {
			held++
			if p, err := d.B.Repo.GetProgress(ctx, it.Target.ID); err != nil || p.Status != pipeline.WorkflowPending {
				t.Fatalf("held workflow is %s, %v; want pending", p.Status, err)
			}
			continue
		}
		started = append(started, res.ExecutionID)
	}
	if len(started) != 1 || held != 2 {
		t.Fatalf("%d started, %d held; want 1 and 2 under a limit of one", len(started), held)
	}
	r := d.reconciler()
	for len(started) < len(items) {
		if ex := d.wait(t, started[len(started)-1]); ex.Status != "SUCCEEDED" {
			for _, it := range items {
				p, _ := d.B.Repo.GetProgress(ctx, it.Target.ID)
				t.Logf("%s: %s %+v", it.Target.ID, p.Status, p.Steps)
			}
			t.Fatalf("v2 execution %s %s %s", ex.Status, ex.Error, ex.Cause)
		}
		if _, err := r.ReconcileInProgress(ctx); err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			wf, err := d.B.Repo.GetWorkflow(ctx, it.Target.DocumentID, it.Target.ID)
			if err != nil {
				t.Fatal(err)
			}
			if wf.ExecutionID != "" && !slices.Contains(started, wf.ExecutionID) {
				started = append(started, wf.ExecutionID)
			}
		}
	}
	if ex := d.wait(t, started[len(started)-1]); ex.Status != "SUCCEEDED" {
		t.Fatalf("v2 execution %s %s %s", ex.Status, ex.Error, ex.Cause)
	}
	if a, b := countRuns(t, dir, "a"), countRuns(t, dir, "b"); a != 6 || b != 6 {
		t.Errorf("backfill onto v2: a ran %d times in all, b %d; want 6 (reused) and 6", a, b)
	}
	for _, it := range items {
		p, err := d.B.Repo.GetProgress(ctx, it.Target.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != pipeline.WorkflowCompleted || !p.Steps["a"].Reused() || p.Steps["b"].Reused() {
			t.Errorf("%s: %s, a %+v, b %+v; want completed with a reused and b run", it.Target.FileName, p.Status, p.Steps["a"], p.Steps["b"])
		}
		old, err := d.B.Repo.GetWorkflow(ctx, it.Previous.DocumentID, it.Previous.ID)
		if err != nil || old.SupersededBy != it.Target.ID {
			t.Errorf("%s: old workflow superseded by %q, %v; want %s", it.Target.FileName, old.SupersededBy, err, it.Target.ID)
		}
	}
}

// docpipe backfill on AWS waits for the executions it started, held ones
// included (the reconciler starts those), with the progress and time
// left a local backfill shows; then it reports each document, exits 0,
// and leaves one backfill.completed event summing it up for the sinks.
func TestBackfillCommandOnStepFunctions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	d, dir, _, _, _, _ := backfillFixture(t)
	// The ingest function's schedule, which starts held workflows.
	reconcile, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for reconcile.Err() == nil {
			if _, err := d.reconciler().ReconcileInProgress(reconcile); err != nil && reconcile.Err() == nil {
				t.Errorf("reconcile: %v", err)
				return
			}
			select {
			case <-reconcile.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	cmd := docpipeCommand(ctx, testbin.Docpipe(t), "backfill", "--table", d.Table, "--bucket", d.Bucket, "--state-machine", d.StateMachineARN,
		"--project", project, "--pipeline", "it-backfill@2", "--json", "--progress", "log")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	stop()
	if err != nil {
		t.Fatalf("docpipe backfill: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	log := stderr.String()
	for _, want := range []string{"2 held", "backfill 1/3 documents, 0 failed, about ", "backfill 3/3 documents, 0 failed, done in "} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	var lines int
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct{ Status string }
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Status != "completed" {
			t.Errorf("report line %q: want a completed document", l)
		}
		lines++
	}
	if lines != 3 {
		t.Errorf("%d report lines, want 3:\n%s", lines, out)
	}
	if a, b := countRuns(t, dir, "a"), countRuns(t, dir, "b"); a != 6 || b != 6 {
		t.Errorf("backfill onto v2: a ran %d times in all, b %d; want 6 (reused) and 6", a, b)
	}
	m := regexp.MustCompile(`backfill (\S+) onto it-backfill@2: 3 documents, 3 completed, 0 failed; (\d+) stages run, (\d+) reused`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("stderr has no summary of the backfill:\n%s", log)
	}
	evs, err := d.B.Repo.ListWorkflowEvents(ctx, m[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Event.Type != pipeline.EventBackfillCompleted || evs[0].Event.Backfill == nil {
		t.Fatalf("events of backfill %s: %+v; want one %s", m[1], evs, pipeline.EventBackfillCompleted)
	}
	sum := evs[0].Event.Backfill
	if sum.Documents != 3 || sum.Completed != 3 || sum.Failed != 0 || fmt.Sprint(sum.StagesRun) != m[2] || fmt.Sprint(sum.StagesReused) != m[3] || sum.StagesReused < 3 {
		t.Errorf("backfill.completed says %+v; the summary line %q", *sum, m[0])
	}
}
