package pipelinefile

import (
	_ "embed"
	"fmt"
	"slices"
	"sync"

	"github.com/docpipe/docpipe/pipeline"
)

//go:embed default.yaml
var defaultFile []byte

// DefaultFile is the name messages give the embedded default pipeline.
const DefaultFile = "default.yaml"

var parsedDefault = sync.OnceValues(func() (pipeline.Definition, error) {
	def, err := parse(DefaultFile, defaultFile, nil)
	if err == nil {
		err = Validate(def, TargetAWS)
	}
	return def, err
})

// Default returns docpipe's built-in pipeline, a copy the caller may
// change. The embedded file is checked by the package's tests, so a
// failure here is a broken build and panics.
func Default() pipeline.Definition {
	def, err := parsedDefault()
	if err != nil {
		panic(fmt.Sprintf("pipelinefile: the embedded default pipeline is invalid: %v", err))
	}
	return def.Clone()
}

// ingestionHead returns base's ingestion stages by name: what a file that
// does not declare them gets.
func ingestionHead(base *pipeline.Definition) map[string]pipeline.Stage {
	if base == nil {
		return nil
	}
	head := map[string]pipeline.Stage{}
	for _, st := range base.Clone().Stages {
		if slices.Contains(pipeline.IngestionStages, st.Name) {
			head[st.Name] = st
		}
	}
	return head
}

// ingestionNeeds is the fixed need of an ingestion stage: the one before it.
func ingestionNeeds(name string) []string {
	if i := slices.Index(pipeline.IngestionStages, name); i > 0 {
		return []string{pipeline.IngestionStages[i-1]}
	}
	return nil
}

// builtinLabel is the label of a stage that does not set one: the default
// pipeline's label for its builtin, else its name.
func (d *decoder) builtinLabel(builtin, name string) string {
	if d.base != nil && builtin != "" {
		if st, ok := d.base.Stage(builtin); ok {
			return st.Label
		}
	}
	return name
}

// clone deep-copies one stage.
func clone(st pipeline.Stage) pipeline.Stage {
	return pipeline.Definition{Stages: []pipeline.Stage{st}}.Clone().Stages[0]
}
