package steps

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// maxCachedPipelines bounds the pipeline versions kept in memory; when
// full the cache starts over (versions are few and cheap to look up).
const maxCachedPipelines = 256

// workflowPipeline is a pipeline version with what the handlers derive
// from it, computed once per version: versions never change.
type workflowPipeline struct {
	key string // name@version
	def pipeline.Definition
	// segmentSinks are the segment stages no other segment stage waits
	// for: the ones that finish a batch's segments done.
	segmentSinks map[string]bool
	// topo ranks every stage by its topological position.
	topo map[string]int
}

func newWorkflowPipeline(key string, def pipeline.Definition) (*workflowPipeline, error) {
	order, err := def.TopoOrder()
	if err != nil {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("pipeline %s: %v", key, err)}
	}
	p := &workflowPipeline{key: key, def: def, topo: make(map[string]int, len(order)), segmentSinks: map[string]bool{}}
	for i, st := range order {
		p.topo[st.Name] = i
		if st.Scope == pipeline.ScopeSegment {
			p.segmentSinks[st.Name] = true
		}
	}
	for _, st := range order {
		if st.Scope != pipeline.ScopeSegment {
			continue
		}
		for _, a := range def.Ancestors(st.Name) {
			delete(p.segmentSinks, a)
		}
	}
	return p, nil
}

// isSegmentSink reports whether name is a segment stage no other segment
// stage waits for.
func (p *workflowPipeline) isSegmentSink(name string) bool { return p.segmentSinks[name] }

// hasSegmentStages reports whether any stage runs per segment.
func (p *workflowPipeline) hasSegmentStages() bool { return len(p.segmentSinks) > 0 }

// stage returns the stage a payload names, checking it is served by
// handler: a payload sent to the wrong handler is a wiring bug.
func (p *workflowPipeline) stage(name, handler string) (pipeline.Stage, error) {
	st, ok := p.def.Stage(name)
	if !ok {
		return st, &steperr.InvalidInputError{Reason: fmt.Sprintf("pipeline %s has no stage %q", p.key, name)}
	}
	if h := pipeline.HandlerFor(st); h != handler {
		return st, &steperr.InvalidInputError{Reason: fmt.Sprintf("stage %q of pipeline %s runs on %q, not %q", name, p.key, h, handler)}
	}
	return st, nil
}

// segmentAncestors returns the segment stages name waits for, in
// topological order: the stages that ran before it in the same batch.
func (p *workflowPipeline) segmentAncestors(name string) []pipeline.Stage {
	var out []pipeline.Stage
	for _, a := range p.def.Ancestors(name) {
		if st, _ := p.def.Stage(a); st.Scope == pipeline.ScopeSegment {
			out = append(out, st)
		}
	}
	for i := 1; i < len(out); i++ { // few stages: insertion sort by rank
		for j := i; j > 0 && p.topo[out[j].Name] < p.topo[out[j-1].Name]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// pipelineCache resolves and keeps pipeline versions.
type pipelineCache struct {
	src pipeline.Pipelines
	mu  sync.Mutex
	m   map[string]*workflowPipeline
}

func (c *pipelineCache) get(ctx context.Context, name string, version int) (*workflowPipeline, error) {
	key := pipeline.PipelineKey(name, version)
	c.mu.Lock()
	p, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	def, err := c.src.Definition(ctx, name, version)
	if errors.Is(err, pipeline.ErrNotFound) {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("the workflow's pipeline %s is not known here", key)}
	}
	if err != nil {
		return nil, storageErr("read pipeline "+key, err)
	}
	if p, err = newWorkflowPipeline(key, def); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedPipelines {
		clear(c.m)
	}
	c.m[key] = p
	return p, nil
}

// pipelineOf returns the pipeline version a workflow runs, as its step
// item records it.
func (h *handlers) pipelineOf(ctx context.Context, prog pipeline.StepProgress) (*workflowPipeline, error) {
	return h.pipes.get(ctx, prog.Pipeline, prog.PipelineVersion)
}
