package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/spf13/pflag"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline/relay"
)

// Environment variables of the event sinks.
const (
	envWebhookURL     = backend.EnvWebhookURL
	envWebhookSecret  = backend.EnvWebhookSecret
	envEventCommand   = "DOCPIPE_EVENT_COMMAND"
	envEventBridgeBus = backend.EnvEventBridgeBus
	finalDrainTimeout = 30 * time.Second
	relayPollInterval = time.Second
)

// notifyFlags configure where outcome events go. The secret is named by
// the environment variable that holds it, so it never sits on a command
// line (ps, shell history).
type notifyFlags struct {
	webhookURL       string
	webhookSecretEnv string
	command          string
	commandEnv       []string
	eventBridgeBus   string
}

func addNotifyFlags(fs *pflag.FlagSet) *notifyFlags {
	n := &notifyFlags{}
	stringFromEnv(fs, &n.webhookURL, "webhook", envWebhookURL, "POST every outcome event to this URL (Standard Webhooks)")
	fs.StringVar(&n.webhookSecretEnv, "webhook-secret-env", envWebhookSecret, "environment variable holding the webhook signing secret (whsec_...)")
	stringFromEnv(fs, &n.command, "event-command", envEventCommand, "run this shell command per outcome event, the event JSON on stdin")
	fs.StringSliceVar(&n.commandEnv, "event-command-env", nil, "pass these environment variables (names, comma-separated) to the event command, which otherwise gets only PATH, HOME, LANG, LC_ALL, TMPDIR and TZ")
	fs.StringVar(&n.eventBridgeBus, "eventbridge-bus", os.Getenv(envEventBridgeBus), "put outcome events on this EventBridge bus [$"+envEventBridgeBus+"]")
	return n
}

// config is the relay configuration of the flags.
func (n *notifyFlags) config(allowPrivate bool) relay.Config {
	return relay.Config{WebhookURL: n.webhookURL, WebhookSecret: os.Getenv(n.webhookSecretEnv), Command: n.command, CommandEnv: n.commandEnv, EventBridgeBus: n.eventBridgeBus,
		AllowPrivateNetwork: allowPrivate}
}

// buildSinks builds the sinks c configures; none is a valid configuration.
func buildSinks(ctx context.Context, c relay.Config) ([]relay.Sink, error) {
	sinks, err := c.Sinks(func() (relay.EventBridgeAPI, error) {
		cfg, err := backend.LoadAWSConfig(ctx, nil)
		if err != nil {
			return nil, err
		}
		return eventbridge.NewFromConfig(cfg), nil
	})
	var bad *relay.ConfigError
	if errors.As(err, &bad) {
		return nil, usageError{err}
	}
	return sinks, err
}

// blobURI renders result keys as URIs: file:// for a blob directory,
// s3:// on AWS.
func blobURI(b *backend.Backend) func(string) string {
	if d, ok := b.Blobs.(interface{ Root() string }); ok {
		return func(key string) string { return "file://" + d.Root() + "/" + key }
	}
	if b.Kind == "aws" && b.Bucket != "" {
		return func(key string) string { return "s3://" + b.Bucket + "/" + key }
	}
	return nil
}

// startRelay delivers events in the background while a command runs: the
// backlog left by earlier runs first, then new outcomes as they commit.
// The returned stop ends it after one last pass, so a run's own events go
// out before it exits; what still fails stays pending for the next start.
// Without sinks, the command's or any project's, it does nothing.
// allowPrivate lets webhooks, the project's own too, reach addresses that
// are not public.
func startRelay(ctx context.Context, b *backend.Backend, n *notifyFlags, allowPrivate bool, logger *slog.Logger) (stop func(), err error) {
	c := n.config(allowPrivate)
	sinks, err := buildSinks(ctx, c)
	if err != nil {
		return func() {}, err
	}
	projects, err := b.Repo.ListProjectSinks(ctx)
	if err != nil || len(sinks)+len(projects) == 0 {
		return func() {}, err
	}
	r := &relay.Relay{Repo: b.Repo, Sinks: sinks, BlobURI: blobURI(b), Logger: logger,
		ProjectSinks: relay.StoredProjectSinks(b.Repo, os.Getenv, c.WebhookOptions()...)}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = relay.Run(runCtx, r, relayPollInterval) })
	return func() {
		cancel()
		wg.Wait()
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), finalDrainTimeout)
		defer dcancel()
		if _, err := r.Drain(dctx); err != nil {
			logger.Warn("delivering events", "error", err)
		}
	}, nil
}
