// Command relay is the Lambda function that delivers docpipe's outcome
// events on AWS (the transactional outbox's forwarder). It takes two kinds
// of invocation:
//
//   - a DynamoDB Streams batch from the table: the workflows whose outbox
//     items (SK EVENT#..., still in the pending index) appear in the
//     records get their pending events delivered at once;
//   - a scheduled EventBridge event: a sweep of the whole pending index,
//     for events whose stream record was lost or whose retry is due.
//
// Every event goes to the sinks configured here and to its project's own
// (`docpipe events sinks`), at least once and in order per workflow.
//
// Configuration: DOCPIPE_TABLE; DOCPIPE_BUCKET (results as s3:// URIs);
// DOCPIPE_WEBHOOK_URL; DOCPIPE_WEBHOOK_SECRET_ARN, the Secrets Manager
// secret or SSM SecureString parameter holding its signing secret
// (whsec_...), read once at start (none: unsigned requests);
// DOCPIPE_WEBHOOK_SECRET, the secret itself, for local runs only;
// DOCPIPE_EVENTBRIDGE_BUS; project webhooks read their secrets from the
// variables they name. Webhooks reach only public addresses (never the
// Lambda runtime API or the VPC) unless DOCPIPE_ALLOW_PRIVATE_NETWORK is
// true. AWS settings from the SDK's chain.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/relayfn"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/relay"
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

func newHandler(ctx context.Context, getenv func(string) string, logger *slog.Logger) (*relayfn.Handler, error) {
	tableName := getenv(backend.EnvTable)
	if tableName == "" {
		return nil, fmt.Errorf("%s is not set", backend.EnvTable)
	}
	cfg, err := backend.LoadAWSConfig(ctx, nil)
	if err != nil {
		return nil, err
	}
	return newRelayHandler(ctx, cfg, getenv, awsSecretStores(cfg), logger)
}

// newRelayHandler wires the relay from an AWS configuration and the stores
// the webhook secret may be read from.
func newRelayHandler(ctx context.Context, cfg aws.Config, getenv func(string) string, stores secretStores, logger *slog.Logger) (*relayfn.Handler, error) {
	secret, err := webhookSecret(ctx, getenv, stores)
	if err != nil {
		return nil, err
	}
	repo := pipeline.NewRepository(dynamotable.New(dynamodb.NewFromConfig(cfg), getenv(backend.EnvTable)))
	c := relay.Config{WebhookURL: getenv(backend.EnvWebhookURL), WebhookSecret: secret, EventBridgeBus: getenv(backend.EnvEventBridgeBus)}
	if v := getenv(backend.EnvAllowPrivateNetwork); v != "" {
		if c.AllowPrivateNetwork, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("%s=%q: want true or false", backend.EnvAllowPrivateNetwork, v)
		}
	}
	sinks, err := c.Sinks(func() (relay.EventBridgeAPI, error) { return eventbridge.NewFromConfig(cfg), nil })
	if err != nil {
		return nil, err
	}
	r := &relay.Relay{
		Repo:         repo,
		Sinks:        sinks,
		ProjectSinks: relay.StoredProjectSinks(repo, getenv, c.WebhookOptions()...),
		Logger:       logger,
	}
	if bucket := getenv(backend.EnvBucket); bucket != "" {
		r.BlobURI = func(key string) string { return "s3://" + bucket + "/" + key }
	}
	return &relayfn.Handler{Relay: r, Logger: logger}, nil
}
