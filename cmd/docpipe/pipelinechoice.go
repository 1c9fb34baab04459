package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// chosenPipeline is the stored version new documents run.
type chosenPipeline struct {
	name    string
	version int
	def     pipeline.Definition
}

func (c chosenPipeline) String() string { return fmt.Sprintf("%s@%d", c.name, c.version) }

// choosePipeline settles which stored pipeline version new documents of a
// project run: ref (NAME or NAME@VERSION) when given, else the project's
// default, else the built-in pipeline. The built-in one is applied first —
// a no-op once its content is stored — so every workflow records a stored
// version (docpipe@N).
func choosePipeline(ctx context.Context, repo *pipeline.Repository, projectID, ref string) (chosenPipeline, error) {
	if ref == "" {
		p, err := repo.GetProject(ctx, projectID)
		if err != nil && !errors.Is(err, pipeline.ErrNotFound) {
			return chosenPipeline{}, err
		}
		ref = p.Settings.Pipeline
	}
	builtin := pipelinefile.Default()
	if ref == "" {
		ref = builtin.Name
	}
	name, version, err := parsePipelineRef(ref)
	if err != nil {
		return chosenPipeline{}, err
	}
	if name == builtin.Name && version == 0 {
		v, _, err := repo.ApplyPipeline(ctx, builtin)
		if err != nil {
			return chosenPipeline{}, err
		}
		return chosenPipeline{name: name, version: v, def: builtin}, nil
	}
	if version == 0 {
		if version, err = repo.CurrentPipelineVersion(ctx, name); err != nil {
			return chosenPipeline{}, notFoundHint(err, "pipeline "+name, "`docpipe pipeline apply FILE` stores it")
		}
	}
	def, err := repo.Definition(ctx, name, version)
	if err != nil {
		return chosenPipeline{}, notFoundHint(err, fmt.Sprintf("pipeline %s@%d", name, version), listHint)
	}
	return chosenPipeline{name: name, version: version, def: def}, nil
}
