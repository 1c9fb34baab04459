// Package pipelinedeploy runs stored pipeline versions on AWS. A version
// runs in a state machine of its own, docpipe-<name>-v<version>: versions
// are immutable, so a machine never changes under the executions that run
// it, and one that no workflow runs any more can be deleted on its own. It
// is generated in the task mode of the deployment's state machine (the one
// Terraform deployed for the built-in pipeline) and runs with that
// machine's role.
package pipelinedeploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/statemachine"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// API is the part of Step Functions a deployment of a version uses.
type API interface {
	sfn.DeployAPI
	DescribeStateMachine(ctx context.Context, in *awssfn.DescribeStateMachineInput, optFns ...func(*awssfn.Options)) (*awssfn.DescribeStateMachineOutput, error)
}

// StateMachineName is the state machine of a pipeline version.
func StateMachineName(name string, version int) string {
	return fmt.Sprintf("docpipe-%s-v%d", name, version)
}

// Deploy deploys a stored version's state machine next to the deployment's
// (deploymentARN) and records its ARN on the version. A version that has
// one already is left alone.
func Deploy(ctx context.Context, api API, repo *pipeline.Repository, deploymentARN string, def pipeline.Definition, version int) (string, error) {
	stored, err := repo.GetPipeline(ctx, def.Name, version)
	if err != nil {
		return "", err
	}
	if stored.StateMachineARN != "" {
		return stored.StateMachineARN, nil
	}
	out, err := api.DescribeStateMachine(ctx, &awssfn.DescribeStateMachineInput{StateMachineArn: aws.String(deploymentARN)})
	if err != nil {
		return "", fmt.Errorf("describe the deployment's state machine: %w", err)
	}
	mode, vars, err := Mode([]byte(aws.ToString(out.Definition)))
	if err != nil {
		return "", fmt.Errorf("state machine %s: %w", deploymentARN, err)
	}
	raw, err := statemachine.Generate(def, mode)
	if err != nil {
		return "", err
	}
	if raw, err = statemachine.Render(raw, vars); err != nil {
		return "", err
	}
	arn, err := sfn.New(api).DeployStateMachine(ctx, StateMachineName(def.Name, version), aws.ToString(out.RoleArn), raw)
	if err != nil {
		return "", err
	}
	return arn, repo.SetPipelineStateMachine(ctx, def.Name, version, arn)
}

// Mode reads the task mode of a deployed docpipe state machine,
// and the values its template variables had, from its first task.
func Mode(definition []byte) (statemachine.Mode, map[string]string, error) {
	var sm struct {
		States map[string]struct {
			Resource   string
			Parameters struct {
				QueueURL     string `json:"QueueUrl"`
				FunctionName string
			}
		}
	}
	if err := json.Unmarshal(definition, &sm); err != nil {
		return "", nil, fmt.Errorf("read its definition: %w", err)
	}
	first, ok := sm.States[pipeline.StepSegmentPrep]
	if !ok {
		return "", nil, fmt.Errorf("no %s state: not a docpipe state machine", pipeline.StepSegmentPrep)
	}
	switch res := first.Resource; {
	case strings.HasPrefix(res, "arn:aws:states:::sqs:sendMessage"):
		return statemachine.ModeQueue, map[string]string{statemachine.VarTaskQueueURL: first.Parameters.QueueURL}, nil
	case strings.HasPrefix(res, "arn:aws:states:::lambda:invoke"):
		return statemachine.ModeLambda, map[string]string{statemachine.VarStepsFunctionARN: first.Parameters.FunctionName}, nil
	case strings.Contains(res, ":activity:") && strings.HasSuffix(res, pipeline.StepSegmentPrep):
		return statemachine.ModeActivity, map[string]string{statemachine.VarActivityARNPrefix: strings.TrimSuffix(res, pipeline.StepSegmentPrep)}, nil
	default:
		return "", nil, fmt.Errorf("task resource %q is none of docpipe's task modes", res)
	}
}

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
