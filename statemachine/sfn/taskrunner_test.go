package sfn

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

func TestCheckHeartbeat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		interval, timeout time.Duration
		ok                bool
	}{
		{DefaultHeartbeat, 60 * time.Second, true},
		{29 * time.Second, 60 * time.Second, true},
		{30 * time.Second, 60 * time.Second, false}, // one lost beat times the task out
		{time.Minute, 60 * time.Second, false},
		{time.Second, 5 * time.Second, true},
		{0, 60 * time.Second, false},
		{-time.Second, 60 * time.Second, false},
	} {
		err := CheckHeartbeat(c.interval, c.timeout)
		if (err == nil) != c.ok {
			t.Errorf("CheckHeartbeat(%v, %v) = %v, want ok %v", c.interval, c.timeout, err, c.ok)
		}
		if err != nil && c.interval > 0 && !strings.Contains(err.Error(), "HeartbeatSeconds") {
			t.Errorf("CheckHeartbeat(%v, %v) = %q: does not name HeartbeatSeconds", c.interval, c.timeout, err)
		}
	}
}

func TestWorkersCheckHeartbeatAtStart(t *testing.T) {
	t.Parallel()
	api := newFakeTasks()
	q := newFakeQueue()
	reg := pipeline.NewRegistry()
	slow := TaskOptions{Heartbeat: 40 * time.Second}
	if err := (&Worker{API: api, Handler: reg, Activities: []string{"a"}, TaskOptions: slow}).Run(t.Context()); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("activity worker: %v", err)
	}
	if err := (&QueueWorker{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: slow}).Run(t.Context()); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("queue worker: %v", err)
	}
	// A definition with a shorter HeartbeatSeconds needs a shorter interval.
	short := TaskOptions{HeartbeatTimeout: 5 * time.Second}
	if err := (&QueueWorker{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: short}).Run(t.Context()); err == nil {
		t.Error("default heartbeat accepted for a 5 s heartbeat timeout")
	}
}

// callbacks records what a runner reports.
type callbacks struct {
	mu      sync.Mutex
	success map[string]string
	failure map[string]*awssfn.SendTaskFailureInput
	beatErr error
}

func newCallbacks() *callbacks {
	return &callbacks{success: map[string]string{}, failure: map[string]*awssfn.SendTaskFailureInput{}}
}

func (c *callbacks) SendTaskSuccess(_ context.Context, in *awssfn.SendTaskSuccessInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskSuccessOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.success[*in.TaskToken] = *in.Output
	return &awssfn.SendTaskSuccessOutput{}, nil
}

func (c *callbacks) SendTaskFailure(_ context.Context, in *awssfn.SendTaskFailureInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskFailureOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failure[*in.TaskToken] = in
	return &awssfn.SendTaskFailureOutput{}, nil
}

func (c *callbacks) SendTaskHeartbeat(context.Context, *awssfn.SendTaskHeartbeatInput, ...func(*awssfn.Options)) (*awssfn.SendTaskHeartbeatOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &awssfn.SendTaskHeartbeatOutput{}, c.beatErr
}

func TestTaskRunnerBoundsConcurrency(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 3)
	h := pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) {
		started <- struct{}{}
		<-release
		return nil, nil
	})
	api := newCallbacks()
	ctx, cancel := context.WithCancel(t.Context())
	r, err := newTaskRunner(ctx, api, h, TaskOptions{Concurrency: 2, NewTicker: manualTicker(nil)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.acquire(ctx, 3); got != 2 {
		t.Fatalf("acquired %d slots, want the 2 there are", got)
	}
	for _, tok := range []string{"a", "b"} {
		r.spawn(func(ctx context.Context) { _, _ = r.run(ctx, slog.New(slog.DiscardHandler), tok, nil, nil) })
	}
	<-started
	<-started
	full, stop := context.WithCancel(ctx)
	stop()
	if got := r.acquire(full, 1); got != 0 {
		t.Errorf("acquired %d slots while both run", got)
	}
	close(release)
	if got := r.acquire(ctx, 2); got < 1 {
		t.Errorf("no slot after the tasks ended")
	}
	cancel()
	r.close()
	if api.success["a"] != "{}" || api.success["b"] != "{}" {
		t.Errorf("successes %v, want {} for both", api.success)
	}
}

func TestTaskRunnerNamesFailures(t *testing.T) {
	t.Parallel()
	api := newCallbacks()
	fails := pipeline.HandlerFunc(func(_ context.Context, in []byte) ([]byte, error) {
		if string(in) == "typed" {
			return nil, &steperr.TooLargeError{Reason: "big"}
		}
		return nil, errors.New("plain")
	})
	log := slog.New(slog.DiscardHandler)
	ctx := t.Context()
	byDefault, err := newTaskRunner(ctx, api, fails, TaskOptions{NewTicker: manualTicker(nil)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	unnamed, err := newTaskRunner(ctx, api, fails, TaskOptions{NewTicker: manualTicker(nil), ErrorName: func(error) string { return "" }}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for tok, run := range map[string]struct {
		r     *taskRunner
		input string
	}{"typed": {byDefault, "typed"}, "plain": {byDefault, "plain"}, "unnamed": {unnamed, "plain"}} {
		if _, err := run.r.run(ctx, log, tok, []byte(run.input), nil); err != nil {
			t.Fatal(err)
		}
	}
	for tok, want := range map[string]string{"typed": steperr.NameTooLarge, "plain": steperr.NameUnexpected} {
		if got := aws.ToString(api.failure[tok].Error); got != want {
			t.Errorf("%s: error %q, want %q", tok, got, want)
		}
	}
	if f := api.failure["unnamed"]; f.Error != nil || aws.ToString(f.Cause) != "plain" {
		t.Errorf("unnamed failure: error %v, cause %q; want no error name and the message as cause", f.Error, aws.ToString(f.Cause))
	}
}

func TestTaskRunnerAbandonsTaskTheStateMachineDropped(t *testing.T) {
	t.Parallel()
	api := newCallbacks()
	api.beatErr = &types.TaskTimedOut{Message: aws.String("heartbeat timeout")}
	ticks := make(chan time.Time)
	h := pipeline.HandlerFunc(func(ctx context.Context, _ []byte) ([]byte, error) {
		ticks <- time.Now()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	r, err := newTaskRunner(t.Context(), api, h, TaskOptions{NewTicker: manualTicker(ticks)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	abandoned, err := r.run(t.Context(), slog.New(slog.DiscardHandler), "t", nil, nil)
	if !abandoned || err != nil {
		t.Errorf("abandoned %v, err %v; want abandoned without error", abandoned, err)
	}
	if len(api.success)+len(api.failure) != 0 {
		t.Errorf("reported a dropped task: %v %v", api.success, api.failure)
	}
}
