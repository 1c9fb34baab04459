package pipelinefile

import (
	"strings"
	"testing"
)

// A problem with an HTTP stage's URL does not repeat the URL's secrets.
func TestProblemsHideURLSecrets(t *testing.T) {
	t.Parallel()
	got := check(t, t.TempDir(), head+`
  - name: a
    scope: document
    run: {http: "ftp://user:PASSWORD-71@example.com/?token=KEY-72"}`, TargetEmbedded)
	if !strings.Contains(got, "http must be") || strings.Contains(got, "PASSWORD-71") || strings.Contains(got, "KEY-72") {
		t.Errorf("problems %q: want the URL problem without its secrets", got)
	}
}
