// Package pipelineroute picks, for a new document or a re-run, the
// pipeline version it runs and the Step Functions state machine that runs
// it: the deployment's own for the built-in pipeline, else the one
// `docpipe pipeline apply` deployed for the version (package
// pipelinedeploy).
package pipelineroute

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// StateMachine is the state machine a workflow of name@version starts
// on: the deployment's own for the built-in pipeline, else the version's.
func StateMachine(ctx context.Context, repo *pipeline.Repository, deployment, name string, version int) (string, error) {
	if name == "" || name == pipeline.DefaultPipeline {
		return deployment, nil
	}
	v, err := repo.GetPipeline(ctx, name, version)
	if err != nil {
		return "", err
	}
	if v.StateMachineARN == "" {
		return "", fmt.Errorf("pipeline %s has no state machine on AWS; `docpipe pipeline apply --table T --state-machine ARN FILE` deploys it", v)
	}
	return v.StateMachineARN, nil
}

// ProjectRoute routes each new document of project to the pipeline the
// project names (its `pipeline` setting, NAME or NAME@VERSION; the current
// version when none is given), read when the document arrives, so an apply
// or a project change needs no redeployment. Without a setting, or naming
// the built-in pipeline, documents run the built-in pipeline on the
// deployment's own state machine.
func ProjectRoute(repo *pipeline.Repository, api sfn.ExecutionAPI, deploymentARN, project string, builtin pipeline.Definition) func(context.Context) (s3ingest.Route, error) {
	return func(ctx context.Context) (s3ingest.Route, error) {
		deployment := s3ingest.Route{Definition: builtin, Executor: &sfn.Executor{API: api, StateMachineARN: deploymentARN, Repo: repo}}
		p, err := repo.GetProject(ctx, project)
		if err != nil && !errors.Is(err, pipeline.ErrNotFound) {
			return s3ingest.Route{}, err
		}
		name, ref, _ := strings.Cut(p.Settings.Pipeline, "@")
		version := 0
		if ref != "" {
			if version, err = strconv.Atoi(ref); err != nil || version < 1 {
				return s3ingest.Route{}, fmt.Errorf("project %s: pipeline %q: the version after @ is a number from 1", project, p.Settings.Pipeline)
			}
		}
		if name == "" || name == builtin.Name && version == 0 {
			return deployment, nil
		}
		if version == 0 {
			if version, err = repo.CurrentPipelineVersion(ctx, name); err != nil {
				return s3ingest.Route{}, fmt.Errorf("project %s: pipeline %s: %w", project, name, err)
			}
		}
		def, err := repo.Definition(ctx, name, version)
		if err != nil {
			return s3ingest.Route{}, err
		}
		arn, err := StateMachine(ctx, repo, deploymentARN, name, version)
		if err != nil {
			return s3ingest.Route{}, err
		}
		return s3ingest.Route{
			Pipeline: name, PipelineVersion: version, Definition: def,
			Executor: &sfn.Executor{API: api, StateMachineARN: arn, Repo: repo},
		}, nil
	}
}
