package pipelinefile

import (
	"reflect"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

func TestReviewRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{"  - name: r\n    run: {review: {assign: [alice]}, due: 72h}\n", ""},
		{"  - name: r\n    run: {review: {group: legal}, due: 1h, hard_limit: 2h, on_timeout: escalate}\n", ""},
		{"  - name: r\n    run: {review: {}, due: 1h}\n", "p.yaml:4: stage \"r\": review needs assign: [names] or group: NAME"},
		{"  - name: r\n    run: {review: {assign: [a], group: g}, due: 1h}\n", "p.yaml:4: stage \"r\": review sets both assign and group; set one"},
		{"  - name: r\n    run: {review: {assign: [a]}}\n", "p.yaml:4: stage \"r\": review needs due: a duration such as 72h"},
		{"  - name: r\n    run: {review: {assign: [a]}, due: 2h, hard_limit: 1h}\n", "p.yaml:4: stage \"r\": hard_limit 3600s comes before due 7200s"},
		{"  - name: r\n    run: {review: {assign: [a]}, due: 1h, on_timeout: escalate}\n", "p.yaml:4: stage \"r\": on_timeout: escalate needs a hard_limit"},
		{"  - name: r\n    run: {review: {assign: [a]}, due: 1h, on_timeout: wait}\n", "p.yaml:4: stage \"r\": on_timeout must be fail or escalate, got \"wait\""},
		{"  - name: r\n    run: {review: {assign: [a]}, due: 1h, on_reject: rework}\n", "p.yaml:4: stage \"r\": on_reject must be fail, got \"rework\""},
		{"  - name: r\n    run: {review: {assign: [a.b]}, due: 1h}\n", "p.yaml:4: stage \"r\": reviewer \"a.b\" must be letters, digits, '_', '-', '+' or '@'"},
		{"  - name: r\n    scope: segment\n    run: {review: {assign: [a]}, due: 1h}\n", "p.yaml:4: stage \"r\": a review runs once per document, at document scope"},
		{"  - name: r\n    run: {command: [true], due: 1h}\n", "p.yaml:4: stage \"r\": due, hard_limit, on_timeout and on_reject belong to a review stage; run sets no review"},
	} {
		if got := check(t, t.TempDir(), head+tc.src, TargetEmbedded); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

// Format writes a review stage so that Parse reads the same stage back.
func TestReviewFormatRoundTrip(t *testing.T) {
	t.Parallel()
	src := head + "  - name: r\n    run: {review: {group: legal}, due: 72h, hard_limit: 168h, on_timeout: escalate, on_reject: fail}\n"
	def, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := def.Stage("r")
	want := pipeline.ReviewSpec{Group: "legal", DueSeconds: 72 * 3600, HardLimitSeconds: 168 * 3600, OnTimeout: "escalate", OnReject: "fail"}
	if st.Run.Review == nil || !reflect.DeepEqual(*st.Run.Review, want) {
		t.Fatalf("parsed %+v", st.Run.Review)
	}
	out := Format(def)
	again, err := Parse("p.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if again.ContentHash() != def.ContentHash() {
		t.Errorf("round trip changed the definition:\n%s", out)
	}
	if !strings.Contains(string(out), "due: 259200s") {
		t.Errorf("formatted:\n%s", out)
	}
}
