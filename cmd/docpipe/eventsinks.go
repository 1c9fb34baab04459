package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/internal/redact"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/relay"
)

// sinkKeys are the per-project sink settings `events sinks` changes.
var sinkKeys = []string{"webhook", "webhook_secret_env"}

func newEventSinksCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "sinks [flags] PROJECT [KEY=VALUE...]",
		Short: "Show or change where a project's events go",
		Long: `Show or change a project's own sinks, which get the project's events besides
the sinks every event goes to (--webhook and friends on run and work, the
relay function's environment on AWS). Keys: ` + strings.Join(sinkKeys, ", ") + `.
webhook_secret_env names the environment variable of the relay that holds
the signing secret (whsec_...); the secret itself is never stored. An empty
value clears a key; clearing webhook removes the project's sinks.`,
		Example: `  docpipe events sinks contracts webhook=https://hooks.example.com/docpipe webhook_secret_env=CONTRACTS_WEBHOOK_SECRET
  docpipe events sinks contracts
  docpipe events sinks contracts webhook=`,
		Args: minArgs(1, "a PROJECT, then KEY=VALUE to change"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			changes := map[string]string{}
			for _, arg := range args[1:] {
				key, value, ok := strings.Cut(arg, "=")
				if !ok || !slices.Contains(sinkKeys, key) {
					return usageErrorf("%q is not KEY=VALUE with a key of %s", arg, strings.Join(sinkKeys, ", "))
				}
				if key == "webhook" && value != "" {
					if _, err := relay.NewWebhook(value, ""); err != nil {
						return usageError{err}
					}
				}
				changes[key] = value
			}
			b, err := a.openSource(ctx)
			if err != nil {
				return err
			}
			defer b.Close()
			s, err := b.Repo.GetProjectSinks(ctx, args[0])
			if err != nil {
				return err
			}
			if len(changes) > 0 {
				if v, ok := changes["webhook"]; ok {
					s.WebhookURL = v
				}
				if v, ok := changes["webhook_secret_env"]; ok {
					s.WebhookSecretEnv = v
				}
				if s.Empty() {
					s = pipeline.ProjectSinks{ProjectID: args[0]}
				}
				if err := b.Repo.SetProjectSinks(ctx, s); err != nil {
					return notFoundHint(err, "project "+args[0], "`docpipe project create ID` creates it")
				}
			}
			// The stored URL may carry credentials: show it redacted.
			if s.WebhookURL != "" {
				s.WebhookURL = redact.URL(s.WebhookURL)
			}
			if a.jsonOut {
				return writeJSON(a.stdout, s)
			}
			if s.Empty() {
				fmt.Fprintf(a.stdout, "project %s has no sinks of its own\n", args[0])
				return nil
			}
			fmt.Fprintf(a.stdout, "project:            %s\nwebhook:            %s\nwebhook_secret_env: %s\n",
				args[0], s.WebhookURL, orText(s.WebhookSecretEnv, "- (unsigned)"))
			return nil
		},
	}
}
