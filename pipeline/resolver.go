package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"sync"
)

// DefaultPipeline is the name of docpipe's built-in pipeline. A workflow
// that records no pipeline runs it, at version 0.
const DefaultPipeline = "docpipe"

// Pipelines finds the definition of a pipeline version. Versions are
// immutable, so callers may cache what it returns. An empty name is the
// default pipeline. An unknown version gives an error matching ErrNotFound.
type Pipelines interface {
	Definition(ctx context.Context, name string, version int) (Definition, error)
}

// PipelineKey spells a version as "name@version", the empty name as the
// default pipeline.
func PipelineKey(name string, version int) string {
	if name == "" {
		name = DefaultPipeline
	}
	return name + "@" + strconv.Itoa(version)
}

// StaticPipelines is a fixed, in-memory set of pipeline versions: what the
// embedded engine and tests use until versions are stored in the table.
type StaticPipelines struct {
	mu   sync.RWMutex
	defs map[string]Definition
}

// NewStaticPipelines holds def as the default pipeline, version 0.
func NewStaticPipelines(def Definition) *StaticPipelines {
	p := &StaticPipelines{defs: map[string]Definition{}}
	p.Add(DefaultPipeline, 0, def)
	return p
}

// Add holds def as name@version, replacing what was there.
func (p *StaticPipelines) Add(name string, version int, def Definition) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.defs[PipelineKey(name, version)] = def.Clone()
}

// Definition returns a copy of the version's definition.
func (p *StaticPipelines) Definition(_ context.Context, name string, version int) (Definition, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	def, ok := p.defs[PipelineKey(name, version)]
	if !ok {
		return Definition{}, fmt.Errorf("%w: pipeline %s", ErrNotFound, PipelineKey(name, version))
	}
	return def.Clone(), nil
}
