package backend

import (
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// With a pipeline folder set, every version's commands run in
// <folder>/<pipeline name>, whatever folder it was applied from.
func TestPipelineDirOverridesSourceDir(t *testing.T) {
	def := pipelinefile.Default()
	def.Name, def.Dir = "redact", "/where/it/was/applied"
	src := pipeline.NewStaticPipelines(pipelinefile.Default())
	src.Add("redact", 3, def)
	root := t.TempDir()
	got, err := pipelineDir{src: src, root: root}.Definition(t.Context(), "redact", 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "redact"); got.Dir != want {
		t.Errorf("Dir = %q, want %q", got.Dir, want)
	}
	if _, err := (pipelineDir{src: src, root: root}).Definition(t.Context(), "redact", 4); err == nil {
		t.Error("a version that does not exist resolved")
	}
}
