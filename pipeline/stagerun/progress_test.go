package stagerun

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

func TestParseProgress(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]*Progress{
		`{"progress":{"done":3,"total":10}}`:                      {Done: 3, Total: 10},
		`  {"progress": {"done": 0, "total": 1, "unit": "rows"}}`: {Done: 0, Total: 1, Unit: "rows"},
		`{"progress":{"done":10,"total":10}}` + "\r":              {Done: 10, Total: 10},
		`{"progress":{"done":11,"total":10}}`:                     nil,
		`{"progress":{"done":-1,"total":10}}`:                     nil,
		`{"progress":{"done":1,"total":0}}`:                       nil,
		`{"progress":{"done":1}}`:                                 nil,
		`{"progress":{"done":1,"total":2,"eta":5}}`:               nil,
		`{"progress":{"done":1,"total":2},"level":"info"}`:        nil,
		`{"progress":{"done":1,"total":2}} trailing`:              nil,
		`{"progress":null}`:                                       nil,
		`{"progress":{"done":"1","total":2}}`:                     nil,
		`progress 1/2`:                                            nil,
		`{"msg":"progress"}`:                                      nil,
	} {
		got, ok := parseProgress([]byte(line))
		if want == nil {
			if ok {
				t.Errorf("%q read as %+v, want no report", line, got)
			}
			continue
		}
		if !ok || got != *want {
			t.Errorf("%q: %+v %v, want %+v", line, got, ok, *want)
		}
	}
}

func TestProgressWriterSplitsReportsFromLog(t *testing.T) {
	t.Parallel()
	var got []Progress
	w := &progressWriter{log: newTail(reasonBytes), report: func(p Progress) { got = append(got, p) }}
	long := `{"progress":{"done":1,"total":2}}` + strings.Repeat(" ", maxProgressLine)
	// Lines arrive cut anywhere, as pipe reads deliver them.
	stream := "starting\n" + `{"progress":{"done":1,"total":4}}` + "\n" + long + "\n" +
		`{"progress":{"done":2,"total":4,"unit":"rows"}}` + "\nwarning: slow\n" + `{"progress":{"done":4,"total":4}}`
	for i := 0; i < len(stream); i += 7 {
		_, _ = w.Write([]byte(stream[i:min(i+7, len(stream))]))
	}
	w.flush()
	want := []Progress{{Done: 1, Total: 4}, {Done: 2, Total: 4, Unit: "rows"}, {Done: 4, Total: 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reports %+v, want %+v", got, want)
	}
	if log := w.log.String(); log != "starting\n"+long+"\nwarning: slow" {
		t.Errorf("log %q", log)
	}
}

// A command's progress lines reach the caller while it runs and stay out
// of a failure's reason.
func TestCommandReportsProgress(t *testing.T) {
	t.Parallel()
	script := `cat >/dev/null
for i in 1 2 3; do echo "{\"progress\":{\"done\":$i,\"total\":3,\"unit\":\"tables\"}}" >&2; done
echo "table 3 is broken" >&2
exit $CODE`
	for _, code := range []string{"0", "3"} {
		var mu sync.Mutex
		var got []Progress
		req := segmentRequest(t, "x")
		req.Scope, req.Segment = ScopeDocument, nil
		req.Progress = func(p Progress) {
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
		}
		cmd := NewCommand(shell("CODE="+code+"\n"+script), t.TempDir(), time.Minute)
		if code == "0" {
			cmd.Argv = shell("CODE=0\n" + strings.Replace(script, "exit $CODE", `echo '{"ok":true}'`, 1))
		}
		_, err := cmd.Run(t.Context(), req)
		mu.Lock()
		want := []Progress{{1, 3, "tables"}, {2, 3, "tables"}, {3, 3, "tables"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("exit %s: reports %+v, want %+v", code, got, want)
		}
		mu.Unlock()
		var failed *steperr.StageFailedError
		switch {
		case code == "0" && err != nil:
			t.Errorf("exit 0: %v", err)
		case code == "3" && !errors.As(err, &failed):
			t.Errorf("exit 3: %v, want a failed stage", err)
		case code == "3" && (!strings.HasSuffix(err.Error(), ": table 3 is broken") || strings.Contains(err.Error(), "progress")):
			t.Errorf("exit 3: reason %q, want the log line without the progress lines", err)
		}
	}
}
