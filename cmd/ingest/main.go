// Command ingest is the Lambda function that turns uploads into workflows:
// an S3 ObjectCreated event (bucket notification or EventBridge) for a key
// under the incoming prefix registers the document and starts its state
// machine execution, named after a workflow id derived from the object, so
// a redelivered event starts nothing new. The same function takes the
// EventBridge "Step Functions Execution Status Change" event (and a
// scheduled event) to mark workflows failed whose execution ended outside
// the state machine's own error handling.
//
// Configuration: DOCPIPE_TABLE, DOCPIPE_BUCKET, DOCPIPE_STATE_MACHINE_ARN,
// DOCPIPE_PROJECT (default "default"), DOCPIPE_INCOMING_PREFIX (default
// "incoming/"); AWS settings from the SDK's chain.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/pipelineroute"
	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	h, err := newHandler(context.Background(), os.Getenv, logger)
	if err != nil {
		logger.Error("configuration", "err", err)
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

func newHandler(ctx context.Context, getenv func(string) string, logger *slog.Logger) (*handler, error) {
	smARN := getenv(backend.EnvStateMachineARN)
	if smARN == "" {
		return nil, fmt.Errorf("%s is not set", backend.EnvStateMachineARN)
	}
	project := or(getenv(backend.EnvProject), backend.DefaultProject)
	prefix := or(getenv(backend.EnvIncomingPrefix), backend.DefaultIncomingPrefix)
	if err := s3ingest.CheckProjectOutsideUploads(project, prefix); err != nil {
		return nil, err
	}
	cfg, err := backend.LoadAWSConfig(ctx, nil)
	if err != nil {
		return nil, err
	}
	clients := backend.NewAWSClients(cfg)
	b, err := backend.OpenAWSWith(clients, backend.AWSOptions{Table: getenv(backend.EnvTable), Bucket: getenv(backend.EnvBucket)})
	if err != nil {
		return nil, err
	}
	reconciler := &sfn.Reconciler{API: clients.SFN, Repo: b.Repo, StateMachineARN: smARN, Logger: logger,
		// Held workflows start as ingest would have started them.
		Bucket: b.Bucket,
		StateMachineOf: func(ctx context.Context, name string, version int) (string, error) {
			return pipelineroute.StateMachine(ctx, b.Repo, smARN, name, version)
		},
	}
	return &handler{
		Ingest: s3ingest.Ingest{
			Ingester: &pipeline.Ingester{Repo: b.Repo, Blobs: b.Blobs, Definition: pipelinefile.Default(), Bucket: b.Bucket},
			Executor: &sfn.Executor{API: clients.SFN, StateMachineARN: smARN, Repo: b.Repo},
			Project:  project,
			// Each document runs the project's pipeline as it is set when
			// the document arrives.
			Route: pipelineroute.ProjectRoute(b.Repo, clients.SFN, smARN, project, pipelinefile.Default()),
		},
		S3:         clients.S3,
		Reconciler: reconciler,
		Prefix:     prefix,
		Logger:     logger,
	}, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
