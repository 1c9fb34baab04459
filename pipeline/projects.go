package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/table"
)

// CreateProject stores a new project; ErrAlreadyExists if the id is taken.
func (r *Repository) CreateProject(ctx context.Context, p Project) error {
	if err := validID("project", p.ID); err != nil {
		return err
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = r.now().UTC()
	}
	it, err := entityItem(ProjectKey(p.ID), p)
	if err != nil {
		return err
	}
	err = r.t.Put(ctx, it, table.NotExists{Path: table.AttrPK})
	if errors.Is(err, table.ErrConditionFailed) {
		return fmt.Errorf("%w: project %s", ErrAlreadyExists, p.ID)
	}
	return err
}

// GetProject reads a project; ErrNotFound if missing.
func (r *Repository) GetProject(ctx context.Context, projectID string) (Project, error) {
	var p Project
	return p, r.get(ctx, ProjectKey(projectID), &p)
}
