//go:build integration

package integration

import (
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// samplePDF writes a generated PDF of pages pages.
func samplePDF(t *testing.T, pages int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "generated.pdf")
	if err := pdfgen.WriteFile(p, pdfgen.Options{Pages: pages, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	return p
}

// The sample documents run to completion through Step Functions, the task
// queue and the worker, with the same results as on the embedded engine.
func TestSamplesThroughStepFunctions(t *testing.T) {
	t.Parallel()
	d := deploy(t, deployOptions{})
	files := append(sampleFiles(t), samplePDF(t, 120))
	var started []pipeline.Registration
	var execs []string
	for _, f := range files {
		res := d.upload(t, f)
		if res.Registration.Existing || res.ExecutionID == "" {
			t.Fatalf("%s: %+v", f, res)
		}
		started = append(started, res.Registration)
		execs = append(execs, res.ExecutionID)
	}
	for i, arn := range execs {
		if ex := d.wait(t, arn); ex.Status != "SUCCEEDED" {
			t.Errorf("%s: execution %s: %s %s", files[i], ex.Status, ex.Error, ex.Cause)
		}
	}
	if t.Failed() {
		return
	}

	local, err := backend.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	want := runEmbedded(t, local, files)
	ctx := t.Context()
	def := pipelinefile.Default()
	for i, reg := range started {
		g, w := readResults(t, d.B, reg), readResults(t, local, want[i])
		if g.Status != pipeline.WorkflowCompleted || g.Total == 0 || g.Done != g.Total || g.Failed != 0 {
			t.Errorf("%s: %+v", files[i], g)
		}
		if g.Summary != w.Summary || g.Graph != w.Graph || len(g.Segments) != len(w.Segments) || g.Total != w.Total {
			t.Errorf("%s: results differ from the embedded engine's", files[i])
		}
		for j := range min(len(g.Segments), len(w.Segments)) {
			if g.Segments[j] != w.Segments[j] {
				t.Errorf("%s: segment %d differs", files[i], j+1)
			}
		}
		prog, err := d.B.Repo.GetProgress(ctx, reg.Workflow.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range def.Stages {
			if got := prog.Steps[st.Name].Status; got != pipeline.StepCompleted && got != pipeline.StepSkipped {
				t.Errorf("%s: %s is %q", files[i], st.Name, got)
			}
		}
		// Every stage's step items record how it got to its end.
		trs, err := d.B.Repo.ListTransitions(ctx, reg.Workflow.ID)
		if err != nil {
			t.Fatal(err)
		}
		ended := map[string]bool{}
		for _, tr := range trs {
			if tr.To == pipeline.StepCompleted || tr.To == pipeline.StepSkipped {
				ended[tr.Step] = true
			}
		}
		for _, st := range def.Stages {
			if !ended[st.Name] {
				t.Errorf("%s: no transition of %s to its end among %d", files[i], st.Name, len(trs))
			}
		}
		wf, err := d.B.Repo.GetWorkflow(ctx, reg.Document.ID, reg.Workflow.ID)
		if err != nil || wf.ExecutionID != execs[i] {
			t.Errorf("%s: workflow records execution %q, %v", files[i], wf.ExecutionID, err)
		}
	}
}
