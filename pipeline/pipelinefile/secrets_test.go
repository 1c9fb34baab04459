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

// An HTTP stage takes headers whose values come from named environment
// variables; the file names the variable, never the value.
func TestHTTPHeadersFromEnv(t *testing.T) {
	t.Parallel()
	src := head + `
  - name: classify
    scope: document
    run:
      http: https://classifier.example.com/run
      headers:
        Authorization: {env: CLASSIFIER_AUTH}
        X-Team: {env: TEAM}`
	if got := check(t, t.TempDir(), src, TargetEmbedded); got != "" {
		t.Fatalf("problems: %s", got)
	}
	def, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := def.Stage("classify")
	run := st.Run
	if run.Headers["Authorization"].Env != "CLASSIFIER_AUTH" || run.HeaderEnv()["X-Team"] != "TEAM" {
		t.Fatalf("headers %+v", run.Headers)
	}
	if s := run.String(); s != "http https://classifier.example.com/run Authorization=$CLASSIFIER_AUTH X-Team=$TEAM" {
		t.Errorf("shown as %q", s)
	}
	again, err := Parse("again.yaml", Format(def))
	if err != nil || again.ContentHash() != def.ContentHash() {
		t.Fatalf("round trip: %v\n%s", err, Format(def))
	}

	for _, tc := range []struct{ run, want string }{
		{`{http: "https://x.example/", headers: {Authorization: {env: "1BAD"}}}`, "env must name an environment variable"},
		{`{http: "https://x.example/", headers: {Authorization: {env: ""}}}`, "env must name an environment variable"},
		{`{http: "https://x.example/", headers: {Authorization: {value: s3cret}}}`, `unknown key "value"`},
		{`{http: "https://x.example/", headers: {Authorization: "Bearer s3cret"}}`, "want a mapping"},
		{`{http: "https://x.example/", headers: {"Bad Name": {env: A}}}`, "not a valid header name"},
		{`{http: "https://x.example/", headers: {content-type: {env: A}}}`, "set by docpipe"},
		{`{command: [cat], headers: {Authorization: {env: A}}}`, "headers are for http stages"},
	} {
		got := check(t, t.TempDir(), head+"\n  - name: a\n    scope: document\n    run: "+tc.run, TargetEmbedded)
		if !strings.Contains(got, tc.want) {
			t.Errorf("run %s: problems %q, want %q", tc.run, got, tc.want)
		}
	}
}
