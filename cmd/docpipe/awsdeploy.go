package main

import (
	"context"

	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/pipelinedeploy"
	"github.com/docpipe/docpipe/pipeline"
)

// deployPipelineVersion deploys a stored version's state machine on AWS,
// like the deployment's own (--state-machine), and records it on the
// version.
func deployPipelineVersion(ctx context.Context, a *app, b *backend.Backend, def pipeline.Definition, version int) (string, error) {
	if a.stateMachine == "" {
		return "", usageErrorf("on AWS, apply deploys the version's state machine like the deployment's own: --state-machine or %s", backend.EnvStateMachineARN)
	}
	cfg, err := backend.LoadAWSConfig(ctx, nil)
	if err != nil {
		return "", err
	}
	return pipelinedeploy.Deploy(ctx, awssfn.NewFromConfig(cfg), b.Repo, a.stateMachine, def, version)
}
