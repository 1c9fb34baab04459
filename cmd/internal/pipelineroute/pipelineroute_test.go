package pipelineroute

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

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
