package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/table"
)

// ProjectSettings are what a project tells the stages of its workflows.
type ProjectSettings struct {
	// Language is the documents' expected language (ISO 639-1), "" to detect.
	Language string `json:"language,omitempty"`
	// DocumentPrompt is free text handed to every stage, e.g. what the
	// documents are and what to look for.
	DocumentPrompt string      `json:"document_prompt,omitempty"`
	OCR            OCRSettings `json:"ocr"`
	// Pipeline is the pipeline run when none is named: NAME or NAME@VERSION;
	// "" is the built-in one.
	Pipeline string `json:"pipeline,omitempty"`
	// MaxConcurrentWorkflows bounds how many of the project's workflows are
	// in progress at once (AdmitWorkflow); 0 is no limit.
	MaxConcurrentWorkflows int `json:"max_concurrent_workflows,omitempty"`
}

// OCRSettings say whether and how pages without text are recognised.
type OCRSettings struct {
	// Enabled is nil when never set: OCR runs when an engine is installed.
	Enabled *bool `json:"enabled,omitempty"`
	// Languages are the OCR engine's language codes (tesseract: "eng",
	// "deu"); none leaves the engine's default.
	Languages []string `json:"languages,omitempty"`
}

// On reports whether OCR is to run.
func (o OCRSettings) On() bool { return o.Enabled == nil || *o.Enabled }

// CreateProject stores a new project; ErrAlreadyExists if the id is taken.
func (r *Repository) CreateProject(ctx context.Context, p Project) error {
	if err := validID("project", p.ID); err != nil {
		return err
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = r.now().UTC()
	}
	p.Revision = 0
	it, err := entityItem(ProjectKey(p.ID), p, projectIndex(p.ID)...)
	if err != nil {
		return err
	}
	err = r.t.Put(ctx, it, table.NotExists{Path: table.AttrPK})
	if errors.Is(err, table.ErrConditionFailed) {
		return fmt.Errorf("%w: project %s", ErrAlreadyExists, p.ID)
	}
	return err
}

// IndexProject lists a project stored before projects were indexed: one
// conditional write that does nothing to a project already listed (or
// missing).
func (r *Repository) IndexProject(ctx context.Context, projectID string) error {
	idx := projectIndex(projectID)
	updates := []table.Update{table.Set{Path: idx[0], Value: idx[1]}, table.Set{Path: idx[2], Value: idx[3]}}
	_, err := r.t.Update(ctx, ProjectKey(projectID), updates, table.And{table.Exists{Path: table.AttrPK}, table.NotExists{Path: table.AttrGSI2PK}})
	if errors.Is(err, table.ErrConditionFailed) {
		return nil
	}
	return err
}

// GetProject reads a project; ErrNotFound if missing.
func (r *Repository) GetProject(ctx context.Context, projectID string) (Project, error) {
	var p Project
	return p, r.get(ctx, ProjectKey(projectID), &p)
}

// UpdateProject applies change to the stored project and writes it back
// only if nobody changed the project since it was read; a concurrent
// change makes it read and apply change again. The id and creation time
// stay as they are. ErrNotFound if the project does not exist.
func (r *Repository) UpdateProject(ctx context.Context, projectID string, change func(*Project) error) (Project, error) {
	var out Project
	what := func() string { return "update project " + projectID }
	err := r.retry(ctx, what, func() error {
		p, err := r.GetProject(ctx, projectID)
		if err != nil {
			return err
		}
		was, created := p.Revision, p.CreatedAt
		if err := change(&p); err != nil {
			return err
		}
		p.ID, p.CreatedAt, p.Revision = projectID, created, was+1
		it, err := entityItem(ProjectKey(projectID), p, projectIndex(projectID)...)
		if err != nil {
			return err
		}
		var cond table.Cond = table.NotExists{Path: "data.revision"}
		if was > 0 {
			cond = table.Equals{Path: "data.revision", Value: was}
		}
		err = r.t.Put(ctx, it, table.And{table.Exists{Path: table.AttrPK}, cond})
		if errors.Is(err, table.ErrConditionFailed) {
			return errLostRace
		}
		out = p
		return err
	})
	return out, err
}

// ListProjects returns every project, ordered by id. A project stored
// before projects were indexed appears once it is next updated or
// ensured (IndexProject).
func (r *Repository) ListProjects(ctx context.Context) ([]Project, error) {
	items, err := queryAll(ctx, r.t, table.Query{Index: table.IndexGSI2, PK: PKProjects, SKPrefix: PrefixProject})
	if err != nil {
		return nil, err
	}
	return decodeAll[Project](items)
}

// CountProjectDocuments counts a project's documents, stopping at upTo
// (0: no bound) so that a count costs a bounded read.
func (r *Repository) CountProjectDocuments(ctx context.Context, projectID string, upTo int) (int, error) {
	page, err := r.t.Query(ctx, table.Query{PK: ProjectKey(projectID).PK, SKPrefix: PrefixDocument, Limit: upTo, CountOnly: true})
	if err != nil {
		return 0, fmt.Errorf("pipeline: count documents of project %s: %w", projectID, err)
	}
	return page.Count, nil
}
