package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docpipe/docpipe/statemachine/asl"
)

func mustParse(t testing.TB, def string) *asl.StateMachine {
	t.Helper()
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

func TestExecuteRejectsInvalidDefinition(t *testing.T) {
	t.Parallel()
	sm := mustParse(t, `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"C":{"Type":"Succeed"}}}`)
	_, err := New(Options{}).Execute(t.Context(), sm, "x", nil)
	var ve *asl.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 2 {
		t.Fatalf("err = %v, want a ValidationError with 2 problems", err)
	}
}

func TestExecuteRejectsBadInput(t *testing.T) {
	t.Parallel()
	sm := mustParse(t, `{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}`)
	if _, err := New(Options{}).Execute(t.Context(), sm, "x", json.RawMessage(`{`)); err == nil {
		t.Fatal("Execute accepted malformed input")
	}
}

func TestCancellationUnwraps(t *testing.T) {
	t.Parallel()
	sm := mustParse(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true}}}`)
	ctx, cancel := context.WithCancel(t.Context())
	eng := New(Options{Tasks: TaskInvokerFunc(func(ctx context.Context, _ string, _ json.RawMessage, _ TaskContext) (json.RawMessage, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})})
	_, err := eng.Execute(ctx, sm, "x", nil)
	var ee *ExecutionError
	if !errors.As(err, &ee) || ee.Name != ErrorAborted || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want an aborted ExecutionError wrapping context.Canceled", err)
	}
}

// TestTimeoutEndsStateWhenInvokerIgnoresContext checks the state fails,
// windDown after its deadline, even though the invoker keeps running.
func TestTimeoutEndsStateWhenInvokerIgnoresContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sm := mustParse(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","TimeoutSeconds":10,"End":true}}}`)
		eng := New(Options{Tasks: TaskInvokerFunc(func(context.Context, string, json.RawMessage, TaskContext) (json.RawMessage, error) {
			time.Sleep(time.Hour)
			return json.RawMessage(`1`), nil
		})})
		start := time.Now()
		_, err := eng.Execute(t.Context(), sm, "x", nil)
		var ee *ExecutionError
		if !errors.As(err, &ee) || ee.Name != asl.ErrorTimeout {
			t.Fatalf("err = %v, want States.Timeout", err)
		}
		if d := time.Since(start); d != 10*time.Second+windDown {
			t.Errorf("state ended after %v, want 10s and the wind-down", d)
		}
		time.Sleep(time.Hour) // let the abandoned invoker return
	})
}

// A task whose state ends before it answers (its timeout, a sibling
// branch's failure) has returned by the time the failure moves on, when it
// honours its context: what it records as it stops comes first.
func TestEndedTaskReturnsBeforeTheFailureMovesOn(t *testing.T) {
	t.Parallel()
	for name, def := range map[string]string{
		"timeout": `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"slow","TimeoutSeconds":1,"End":true}}}`,
		"sibling": `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		  {"StartAt":"S","States":{"S":{"Type":"Task","Resource":"slow","End":true}}},
		  {"StartAt":"F","States":{"F":{"Type":"Task","Resource":"fail","End":true}}}]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var stopped atomic.Bool
				started := make(chan struct{})
				eng := New(Options{Tasks: TaskInvokerFunc(func(ctx context.Context, res string, _ json.RawMessage, _ TaskContext) (json.RawMessage, error) {
					if res == "fail" {
						<-started // the sibling is running when this fails
						return nil, &TaskError{Name: "Broke"}
					}
					close(started)
					<-ctx.Done()
					time.Sleep(time.Second) // recording that it stopped
					stopped.Store(true)
					return nil, ctx.Err()
				})})
				_, err := eng.Execute(t.Context(), mustParse(t, def), "x", nil)
				if err == nil {
					t.Fatal("the execution succeeded")
				}
				if !stopped.Load() {
					t.Error("the failure moved on before the ended task returned")
				}
			})
		})
	}
}

func TestEventsAreOrderedUnderConcurrency(t *testing.T) {
	t.Parallel()
	const items = 300
	sm := mustParse(t, `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
	  {"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":8,"ItemsPath":"$.items","End":true,
	    "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true}}}}}},
	  {"StartAt":"I","States":{"I":{"Type":"Map","ItemsPath":"$.items","End":true,
	    "ItemProcessor":{"StartAt":"U","States":{"U":{"Type":"Task","Resource":"r","End":true}}}}}}]}}}`)
	var mu sync.Mutex
	var evs []Event
	eng := New(Options{
		Tasks: TaskInvokerFunc(func(_ context.Context, _ string, in json.RawMessage, _ TaskContext) (json.RawMessage, error) {
			return in, nil
		}),
		OnEvent: func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			evs = append(evs, e)
		},
	})
	in := make([]int, items)
	for i := range in {
		in[i] = i
	}
	input, _ := json.Marshal(map[string]any{"items": in})
	out, err := eng.Execute(t.Context(), sm, "x", input)
	if err != nil {
		t.Fatal(err)
	}
	var res [][]int
	if err := json.Unmarshal(out, &res); err != nil || len(res) != 2 || len(res[0]) != items || res[0][items-1] != items-1 || res[1][7] != 7 {
		t.Fatalf("output %s (%v)", out, err)
	}
	counts := map[EventType]int{}
	children := map[string]bool{}
	for i, e := range evs {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i, e.ID)
		}
		counts[e.Type]++
		if e.Type == TaskSucceeded && e.Index >= 0 {
			children[e.Execution] = true
		}
	}
	if counts[MapIterationSucceeded] != 2*items || counts[TaskSucceeded] != 2*items || counts[MapRunSucceeded] != 1 || counts[MapStateSucceeded] != 1 {
		t.Errorf("counts = %v", counts)
	}
	if len(children) != items {
		t.Errorf("distributed tasks ran in %d child executions, want %d", len(children), items)
	}
	if evs[0].Type != ExecutionStarted || evs[len(evs)-1].Type != ExecutionSucceeded {
		t.Errorf("first/last events %s/%s", evs[0].Type, evs[len(evs)-1].Type)
	}
}

func TestDataLimitIsNotCaughtByAll(t *testing.T) {
	t.Parallel()
	sm := mustParse(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,
	  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}]},"C":{"Type":"Succeed"}}}`)
	big := json.RawMessage(`"` + strings.Repeat("x", MaxPayloadBytes) + `"`)
	eng := New(Options{Tasks: TaskInvokerFunc(func(context.Context, string, json.RawMessage, TaskContext) (json.RawMessage, error) {
		return big, nil
	})})
	_, err := eng.Execute(t.Context(), sm, "x", nil)
	var ee *ExecutionError
	if !errors.As(err, &ee) || ee.Name != asl.ErrorDataLimitExceeded {
		t.Fatalf("err = %v, want States.DataLimitExceeded", err)
	}
}

func TestNoTaskInvoker(t *testing.T) {
	t.Parallel()
	sm := mustParse(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true}}}`)
	_, err := New(Options{}).Execute(t.Context(), sm, "x", nil)
	var ee *ExecutionError
	if !errors.As(err, &ee) || ee.Name != asl.ErrorTaskFailed {
		t.Fatalf("err = %v", err)
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		equals []string
		f      failure
		want   bool
	}{
		{[]string{"States.ALL"}, failure{name: "Anything"}, true},
		{[]string{"States.ALL"}, failure{name: asl.ErrorRuntime}, false},
		{[]string{asl.ErrorRuntime}, failure{name: asl.ErrorRuntime}, false},
		{[]string{"States.ALL"}, failure{name: asl.ErrorDataLimitExceeded}, false},
		{[]string{asl.ErrorDataLimitExceeded}, failure{name: asl.ErrorDataLimitExceeded}, true},
		{[]string{"States.TaskFailed"}, failure{name: "TransientError"}, true},
		{[]string{"States.TaskFailed"}, failure{name: "States.TaskFailed"}, true},
		{[]string{"States.TaskFailed"}, failure{name: "States.Timeout"}, false},
		{[]string{"States.Timeout"}, failure{name: "States.HeartbeatTimeout"}, true},
		{[]string{"States.HeartbeatTimeout"}, failure{name: "States.Timeout"}, false},
		{[]string{"States.BranchFailed"}, failure{name: "X", branch: true}, true},
		{[]string{"States.BranchFailed"}, failure{name: "X"}, false},
		{[]string{"A", "B"}, failure{name: "B"}, true},
		{[]string{"A"}, failure{name: "a"}, false},
		{[]string{"States.ALL"}, failure{name: "X", aborted: true}, false},
	} {
		if got := matches(tc.equals, &tc.f); got != tc.want {
			t.Errorf("matches(%v, %+v) = %v, want %v", tc.equals, tc.f, got, tc.want)
		}
	}
}

func TestWildcardMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*.log", "a.log", true},
		{"*.log", "a.log.gz", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
		{`literal\*`, "literal*", true},
		{`literal\*`, "literalX", false},
		{`back\\*`, `back\slash`, true},
		{"exact", "exact", true},
		{"ab*ab", "ab", false},
	} {
		if got := wildcardMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}

func TestCompileIsCached(t *testing.T) {
	t.Parallel()
	sm := mustParse(t, `{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}`)
	eng := New(Options{})
	if err := eng.Compile(sm); err != nil {
		t.Fatal(err)
	}
	p1, _ := eng.program(sm)
	p2, _ := eng.program(sm)
	if p1 != p2 {
		t.Error("program compiled twice")
	}
	for i := range 3 {
		out, err := eng.Execute(t.Context(), sm, fmt.Sprint(i), json.RawMessage(`{"k":1}`))
		if err != nil || string(out) != `{"k":1}` {
			t.Fatalf("out %s err %v", out, err)
		}
	}
}
