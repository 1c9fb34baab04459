// Package pipelinedeploy runs stored pipeline versions on AWS. A version
// runs in a state machine of its own, <deployment>-<name>-v<version>
// beside the deployment's machine (whose IAM grants cover that prefix):
// versions
// are immutable, so a machine never changes under the executions that run
// it, and one that no workflow runs any more can be deleted on its own. It
// is generated in the task mode of the deployment's state machine (the one
// Terraform deployed for the built-in pipeline) and runs with that
// machine's role.
package pipelinedeploy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/statemachine"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// API is the part of Step Functions a deployment of a version uses.
type API interface {
	sfn.DeployAPI
	DescribeStateMachine(ctx context.Context, in *awssfn.DescribeStateMachineInput, optFns ...func(*awssfn.Options)) (*awssfn.DescribeStateMachineOutput, error)
}

// StateMachineName is the state machine of a pipeline version beside the
// deployment's state machine (its ARN).
func StateMachineName(deploymentARN, name string, version int) string {
	deployment := deploymentARN[strings.LastIndexByte(deploymentARN, ':')+1:]
	return fmt.Sprintf("%s-%s-v%d", deployment, name, version)
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
	arn, err := sfn.New(api).DeployStateMachine(ctx, StateMachineName(deploymentARN, def.Name, version), aws.ToString(out.RoleArn), raw)
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
