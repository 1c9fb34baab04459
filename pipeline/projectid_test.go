package pipeline_test

import (
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// A project's id starts every blob key of its documents: ids that would
// climb out of the blob store, nest under another key, or garble a
// terminal are refused when the project is created, with the rule.
func TestProjectIDsAreSafeInKeysPathsAndTerminals(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"default", "acme-2026", "team_a.eu", "A", strings.Repeat("x", pipeline.MaxProjectID)} {
		if err := pipeline.ValidProjectID(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	repo, _ := newRepo(t)
	for _, id := range []string{"", "../x", "..", ".hidden", "-flag", "a/b", `a\b`, "p#x", "bad\nname", "tab\there", "ünï", "a b", "\x1b[31mred", strings.Repeat("x", pipeline.MaxProjectID+1)} {
		err := repo.CreateProject(t.Context(), pipeline.Project{ID: id})
		if err == nil || !strings.Contains(err.Error(), "letters, digits") {
			t.Errorf("project %q: %v, want it refused with the rule", id, err)
		}
	}
}
