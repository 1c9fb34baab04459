package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docpipe/docpipe/cmd/internal/backend"
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

// appliedPipeline is the stored version a pipeline file's content is.
type appliedPipeline struct {
	name         string
	version      int
	created      bool   // false: the content was stored already
	stateMachine string // on AWS, the version's state machine
}

// String is what apply prints: NAME@VERSION (new) or (unchanged).
func (p appliedPipeline) String() string {
	what := "unchanged"
	if p.created {
		what = "new"
	}
	if p.stateMachine != "" {
		what += ", state machine " + p.stateMachine
	}
	return fmt.Sprintf("%s@%d (%s)", p.name, p.version, what)
}

// applyPipelineFile validates a pipeline file for where it will run and
// stores it as its pipeline's next version; content equal to the current
// version stores nothing and gives that version. On AWS the version's
// state machine is deployed too. Problems with the file are printed, every
// one at its file:line, and end the command with exit status 1.
func applyPipelineFile(ctx context.Context, a *app, b *backend.Backend, path string) (appliedPipeline, error) {
	target := pipelinefile.TargetEmbedded
	if a.onAWS() {
		target = pipelinefile.TargetAWS
	}
	def, err := loadPipeline(path, target)
	if err != nil {
		fmt.Fprintln(a.stderr, err)
		return appliedPipeline{}, exitError{1}
	}
	v, created, err := b.Repo.ApplyPipeline(ctx, def)
	if err != nil {
		return appliedPipeline{}, err
	}
	applied := appliedPipeline{name: def.Name, version: v, created: created}
	if a.onAWS() {
		if applied.stateMachine, err = deployPipelineVersion(ctx, a, b, def, v); err != nil {
			return appliedPipeline{}, err
		}
	}
	return applied, nil
}

// isPipelineFile tells a --pipeline value that is a file from a NAME or
// NAME@VERSION: a file that exists, or a name with a pipeline file's
// extension (which no pipeline name has), so a mistyped path says the
// file is missing rather than that no such pipeline is stored.
func isPipelineFile(ref string) bool {
	switch strings.ToLower(filepath.Ext(ref)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	info, err := os.Stat(ref)
	return err == nil && info.Mode().IsRegular()
}

// pipelineRef turns a --pipeline value into what choosePipeline takes: a
// pipeline file is applied, its NAME@VERSION announced (on stderr under
// --json, which keeps stdout to JSON) and returned; anything else is
// returned as it is.
func pipelineRef(ctx context.Context, a *app, b *backend.Backend, ref string) (string, error) {
	if ref == "" || !isPipelineFile(ref) {
		return ref, nil
	}
	applied, err := applyPipelineFile(ctx, a, b, ref)
	if err != nil {
		return "", err
	}
	out := a.stdout
	if a.jsonOut {
		out = a.stderr
	}
	fmt.Fprintln(out, applied)
	return fmt.Sprintf("%s@%d", applied.name, applied.version), nil
}
