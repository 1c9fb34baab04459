package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Per-project sinks: where a project's outcome events go besides the
// relay's own sinks. They live apart from ProjectSettings because settings
// are handed to every stage, and a webhook URL may carry credentials that
// stages have no business seeing. Their key is in keys.go.

// ProjectSinks are the destinations of one project's events.
type ProjectSinks struct {
	ProjectID string `json:"project_id"`
	// WebhookURL receives the project's events (Standard Webhooks).
	WebhookURL string `json:"webhook_url,omitempty"`
	// WebhookSecretEnv names the environment variable, in the relay's
	// environment, that holds the signing secret; "" sends unsigned. The
	// secret itself is never stored in the table.
	WebhookSecretEnv string `json:"webhook_secret_env,omitempty"`
}

// Empty reports whether the project has no sink at all.
func (s ProjectSinks) Empty() bool { return s.WebhookURL == "" }

// SetProjectSinks stores a project's sinks, replacing what was there; empty
// sinks delete the item. The project must exist (ErrNotFound otherwise), so
// that a typo does not configure a project nobody uses.
func (r *Repository) SetProjectSinks(ctx context.Context, s ProjectSinks) error {
	if err := validID("project", s.ProjectID); err != nil {
		return err
	}
	if _, err := r.GetProject(ctx, s.ProjectID); err != nil {
		return err
	}
	key := ProjectSinksKey(s.ProjectID)
	if s.Empty() {
		err := r.t.Delete(ctx, key, nil)
		if err != nil && !errors.Is(err, table.ErrNotFound) {
			return fmt.Errorf("pipeline: delete sinks of project %s: %w", s.ProjectID, err)
		}
		return nil
	}
	it, err := entityItem(key, s)
	if err != nil {
		return err
	}
	if err := r.t.Put(ctx, it, nil); err != nil {
		return fmt.Errorf("pipeline: put sinks of project %s: %w", s.ProjectID, err)
	}
	return nil
}

// GetProjectSinks reads a project's sinks; a project without any gets
// empty sinks and no error.
func (r *Repository) GetProjectSinks(ctx context.Context, projectID string) (ProjectSinks, error) {
	var s ProjectSinks
	err := r.get(ctx, ProjectSinksKey(projectID), &s)
	if errors.Is(err, table.ErrNotFound) {
		return ProjectSinks{ProjectID: projectID}, nil
	}
	return s, err
}

// ListProjectSinks returns the sinks of every project that has some,
// ordered by project id.
func (r *Repository) ListProjectSinks(ctx context.Context) ([]ProjectSinks, error) {
	items, err := queryAll(ctx, r.t, table.Query{PK: PKSinks, SKPrefix: PrefixProject})
	if err != nil {
		return nil, err
	}
	out, err := decodeAll[ProjectSinks](items)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].ProjectID = strings.TrimPrefix(items[i].Key().SK, PrefixProject)
	}
	return out, nil
}
