package pipelinedeploy

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// The task mode and its variables are read back from each deployed form of
// the built-in pipeline's state machine.
func TestModeOfDeployedDefinitions(t *testing.T) {
	for mode, vars := range map[statemachine.Mode]map[string]string{
		statemachine.ModeQueue:    {statemachine.VarTaskQueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/docpipe-tasks"},
		statemachine.ModeLambda:   {statemachine.VarStepsFunctionARN: "arn:aws:lambda:us-east-1:123456789012:function:docpipe-steps"},
		statemachine.ModeActivity: {statemachine.VarActivityARNPrefix: "arn:aws:states:us-east-1:123456789012:activity:docpipe-"},
	} {
		tmpl, err := statemachine.Definition(mode)
		if err != nil {
			t.Fatal(err)
		}
		deployed, err := statemachine.Render(tmpl, vars)
		if err != nil {
			t.Fatal(err)
		}
		gotMode, gotVars, err := Mode(deployed)
		if err != nil || gotMode != mode || !maps.Equal(gotVars, vars) {
			t.Errorf("%s: Mode = %s, %v, %v; want %s, %v", mode, gotMode, gotVars, err, mode, vars)
		}
	}
	if _, _, err := Mode([]byte(`{"StartAt":"x","States":{"x":{"Type":"Pass","End":true}}}`)); err == nil {
		t.Error("a state machine that is not docpipe's gave a mode")
	}
}

func TestStateMachineName(t *testing.T) {
	if got := StateMachineName("redact", 12); got != "docpipe-redact-v12" {
		t.Errorf("StateMachineName = %q", got)
	}
}

// A project's documents go to the pipeline it names, on that version's
// state machine; without one, to the built-in pipeline on the deployment's.
func TestProjectRoute(t *testing.T) {
	ctx := t.Context()
	tbl, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	builtin := pipelinefile.Default()
	repo := pipeline.NewRepository(tbl, pipeline.WithBuiltinPipeline(builtin))
	const deployment = "arn:aws:states:us-east-1:123456789012:stateMachine:docpipe"
	route := ProjectRoute(repo, nil, deployment, "p", builtin)
	arnOf := func(r s3ingest.Route) string { return r.Executor.(*sfn.Executor).StateMachineARN }

	r, err := route(ctx)
	if err != nil || r.Pipeline != "" || r.Definition.Name != builtin.Name || arnOf(r) != deployment {
		t.Fatalf("no project: %+v, %v", r, err)
	}

	def, err := pipelinefile.Load("../../../samples/pipelines/redact/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := repo.ApplyPipeline(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.CreateProject(ctx, pipeline.Project{ID: "p", Name: "p", Settings: pipeline.ProjectSettings{Pipeline: "redact"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := route(ctx); err == nil || !strings.Contains(err.Error(), "no state machine") {
		t.Fatalf("a version never deployed routed: %v", err)
	}
	const arn = "arn:aws:states:us-east-1:123456789012:stateMachine:docpipe-redact-v1"
	if err := repo.SetPipelineStateMachine(ctx, "redact", v, arn); err != nil {
		t.Fatal(err)
	}
	r, err = route(ctx)
	if err != nil || r.Pipeline != "redact" || r.PipelineVersion != v || r.Definition.ContentHash() != def.ContentHash() || arnOf(r) != arn {
		t.Fatalf("project on redact: %+v, %v", r, err)
	}
}
