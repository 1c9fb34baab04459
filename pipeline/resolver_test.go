package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

func TestStaticPipelines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pipeline.NewStaticPipelines(pipeline.Definition{Name: pipeline.DefaultPipeline, BatchSize: 100})
	p.Add("redact", 3, pipeline.Definition{Name: "redact", BatchSize: 5})
	for _, name := range []string{"", pipeline.DefaultPipeline} {
		if def, err := p.Definition(ctx, name, 0); err != nil || def.BatchSize != 100 {
			t.Errorf("Definition(%q, 0) = %+v, %v; want the default", name, def, err)
		}
	}
	if def, err := p.Definition(ctx, "redact", 3); err != nil || def.BatchSize != 5 {
		t.Errorf("redact@3 = %+v, %v", def, err)
	}
	if _, err := p.Definition(ctx, "redact", 4); !errors.Is(err, pipeline.ErrNotFound) {
		t.Errorf("redact@4: err = %v, want ErrNotFound", err)
	}
	if got := pipeline.PipelineKey("", 0); got != "docpipe@0" {
		t.Errorf("PipelineKey = %q", got)
	}
}
