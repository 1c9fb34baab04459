package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/docpipe/docpipe/statemachine/asl"
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.json from the interpreter's results")

// caseSetup is a golden case's optional tasks.json.
type caseSetup struct {
	Seed uint64 `json:"seed"`
	// Tasks scripts each resource: behaviours with "when" apply whenever the
	// path selects a truthy value in the task input; the others are consumed
	// one per call, the last one repeating.
	Tasks map[string][]behaviour `json:"tasks"`
	// Objects are JSON documents the ItemReader serves, keyed "bucket/key";
	// RawObjects are served byte for byte (for malformed manifests).
	Objects    map[string]json.RawMessage `json:"objects"`
	RawObjects map[string]string          `json:"rawObjects"`
	// CancelAfter aborts the execution after this many (fake) seconds.
	CancelAfter    float64 `json:"cancelAfter"`
	MaxConcurrency int     `json:"maxConcurrency"`
}

type behaviour struct {
	When      string          `json:"when"`
	Output    json.RawMessage `json:"output"`
	Error     string          `json:"error"`
	Cause     string          `json:"cause"`
	Plain     string          `json:"plain"` // a plain Go error with this message
	Named     string          `json:"named"` // a Go error whose ErrorName() is this
	Sleep     float64         `json:"sleep"` // seconds on the fake clock
	Heartbeat float64         `json:"heartbeat"`
	Context   bool            `json:"context"` // return the TaskContext as output
	when      *asl.Path
}

// want is a golden case's want.json. Events and Sleeps are compared only
// when present (events only make sense for cases without concurrency).
type want struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	Cause  string          `json:"cause,omitempty"`
	Calls  map[string]int  `json:"calls,omitempty"`
	Sleeps []float64       `json:"sleeps,omitzero"`
	Events []string        `json:"events,omitzero"`
}

type namedError struct{ name, msg string }

func (e *namedError) Error() string     { return e.msg }
func (e *namedError) ErrorName() string { return e.name }

// scriptedTasks plays back a caseSetup's task scripts.
type scriptedTasks struct {
	mu     sync.Mutex
	script map[string][]behaviour
	pos    map[string]int
	calls  map[string]int
}

func (s *scriptedTasks) pick(resource string, input any) (behaviour, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[resource]++
	var seq []behaviour
	for _, b := range s.script[resource] {
		if b.when == nil {
			seq = append(seq, b)
			continue
		}
		if v, ok := getPath(b.when, input); ok && v != nil && v != false {
			return b, true
		}
	}
	if len(seq) == 0 {
		return behaviour{}, false
	}
	i := min(s.pos[resource], len(seq)-1)
	s.pos[resource]++
	return seq[i], true
}

func (s *scriptedTasks) Invoke(ctx context.Context, resource string, input json.RawMessage, tc TaskContext) (json.RawMessage, error) {
	var in any
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	b, ok := s.pick(resource, in)
	if !ok {
		return nil, &TaskError{Name: "Test.Unscripted", Cause: resource}
	}
	clock := SystemClock{} // virtual time inside the synctest bubble
	if b.Sleep > 0 {
		left := time.Duration(b.Sleep * float64(time.Second))
		step := left
		if b.Heartbeat > 0 {
			step = time.Duration(b.Heartbeat * float64(time.Second))
		}
		for left > 0 {
			d := min(step, left)
			if err := clock.Sleep(ctx, d); err != nil {
				return nil, err
			}
			left -= d
			tc.Heartbeat()
		}
	}
	switch {
	case b.Error != "":
		return nil, &TaskError{Name: b.Error, Cause: b.Cause}
	case b.Plain != "":
		return nil, errors.New(b.Plain)
	case b.Named != "":
		return nil, &namedError{name: b.Named, msg: b.Cause}
	case b.Context:
		return json.Marshal(map[string]any{
			"tokenSet": tc.Token != "", "state": tc.StateName, "retryCount": tc.RetryCount,
			"timeout": tc.Timeout.Seconds(), "heartbeat": tc.HeartbeatTimeout.Seconds(),
		})
	case b.Output != nil:
		return b.Output, nil
	}
	return input, nil
}

// recordingClock notes every sleep and timer the engine requests.
type recordingClock struct {
	SystemClock
	mu     sync.Mutex
	sleeps []float64
}

func (c *recordingClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d.Seconds())
	c.mu.Unlock()
	return c.SystemClock.Sleep(ctx, d)
}

// AfterFunc notes a timer (a task timeout) like a sleep of the same length.
func (c *recordingClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d.Seconds())
	c.mu.Unlock()
	return c.SystemClock.AfterFunc(d, f)
}

func readJSON(t *testing.T, path string, v any) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return true
}

func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/definition.asl.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 40 {
		t.Fatalf("found %d golden cases, want at least 40", len(dirs))
	}
	for _, def := range dirs {
		dir := filepath.Dir(def)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			runGolden(t, dir)
		})
	}
}

func runGolden(t *testing.T, dir string) {
	raw, err := os.ReadFile(filepath.Join(dir, "definition.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := asl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	input := json.RawMessage(`{}`)
	if b, err := os.ReadFile(filepath.Join(dir, "input.json")); err == nil {
		input = b
	}
	var setup caseSetup
	readJSON(t, filepath.Join(dir, "tasks.json"), &setup)
	var w want
	hadWant := readJSON(t, filepath.Join(dir, "want.json"), &w)
	if !hadWant && !*update {
		t.Fatal("missing want.json (run with -update)")
	}
	for res, bs := range setup.Tasks {
		for i := range bs {
			if bs[i].When != "" {
				if bs[i].when, err = asl.ParsePath(bs[i].When); err != nil {
					t.Fatalf("tasks.json %s: %v", res, err)
				}
			}
		}
	}

	var got want
	synctest.Test(t, func(t *testing.T) {
		tasks := &scriptedTasks{script: setup.Tasks, pos: map[string]int{}, calls: map[string]int{}}
		clock := &recordingClock{}
		var events []string
		eng := New(Options{
			Tasks: tasks,
			ItemReader: ItemReaderFunc(func(ctx context.Context, bucket, key string) ([]byte, error) {
				if b, ok := setup.Objects[bucket+"/"+key]; ok {
					return b, nil
				}
				if s, ok := setup.RawObjects[bucket+"/"+key]; ok {
					return []byte(s), nil
				}
				return nil, errors.New("NoSuchKey: " + bucket + "/" + key)
			}),
			Clock:          clock,
			Rand:           rand.New(rand.NewPCG(setup.Seed, 7)),
			MaxConcurrency: setup.MaxConcurrency,
			OnEvent: func(ev Event) {
				s := string(ev.Type)
				if ev.State != "" {
					s += ":" + ev.State
				}
				if ev.Error != "" {
					s += ":" + ev.Error
				}
				events = append(events, s)
			},
		})
		ctx := t.Context()
		if setup.CancelAfter > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(setup.CancelAfter*float64(time.Second)))
			defer cancel()
		}
		out, err := eng.Execute(ctx, sm, "golden", input)
		var ee *ExecutionError
		switch {
		case err == nil:
			got.Output = out
		case errors.As(err, &ee):
			got.Error, got.Cause = ee.Name, ee.Cause
		default:
			t.Fatalf("Execute: %v", err)
		}
		synctest.Wait() // let invokers abandoned by a timeout finish
		tasks.mu.Lock()
		if len(tasks.calls) > 0 {
			got.Calls = maps.Clone(tasks.calls)
		}
		tasks.mu.Unlock()
		clock.mu.Lock()
		got.Sleeps = append([]float64{}, clock.sleeps...)
		clock.mu.Unlock()
		slices.Sort(got.Sleeps)
		got.Events = append([]string{}, events...)
	})

	if !hadWant || w.Sleeps == nil {
		got.Sleeps = nil
	}
	if hadWant && w.Events == nil {
		got.Events = nil
	}
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "want.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !jsonEqual(got.Output, w.Output) {
		t.Errorf("output = %s, want %s", got.Output, w.Output)
	}
	if got.Error != w.Error || got.Cause != w.Cause {
		t.Errorf("error = %q (%q), want %q (%q)", got.Error, got.Cause, w.Error, w.Cause)
	}
	if !reflect.DeepEqual(got.Calls, w.Calls) {
		t.Errorf("calls = %v, want %v", got.Calls, w.Calls)
	}
	if w.Sleeps != nil && !slices.Equal(got.Sleeps, w.Sleeps) {
		t.Errorf("sleeps = %v, want %v", got.Sleeps, w.Sleeps)
	}
	if w.Events != nil && !slices.Equal(got.Events, w.Events) {
		t.Errorf("events =\n  %s\nwant\n  %s", strings.Join(got.Events, "\n  "), strings.Join(w.Events, "\n  "))
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
