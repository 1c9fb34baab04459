package sfn

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// fakeTasks hands out queued tasks, then blocks polls until ctx ends (as a
// long poll does), and records results.
type fakeTasks struct {
	mu         sync.Mutex
	queue      []string
	success    map[string]string
	failure    map[string][2]string
	heartbeats int
	done       chan struct{} // closed when every queued task reported
	want       int
}

func newFakeTasks(inputs ...string) *fakeTasks {
	return &fakeTasks{queue: inputs, success: map[string]string{}, failure: map[string][2]string{}, done: make(chan struct{}), want: len(inputs)}
}

func (f *fakeTasks) GetActivityTask(ctx context.Context, in *awssfn.GetActivityTaskInput, _ ...func(*awssfn.Options)) (*awssfn.GetActivityTaskOutput, error) {
	f.mu.Lock()
	if len(f.queue) > 0 {
		input := f.queue[0]
		f.queue = f.queue[1:]
		f.mu.Unlock()
		return &awssfn.GetActivityTaskOutput{TaskToken: aws.String("tok-" + input), Input: aws.String(input)}, nil
	}
	f.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

func (f *fakeTasks) reported() {
	if len(f.success)+len(f.failure) == f.want {
		close(f.done)
	}
}

func (f *fakeTasks) SendTaskSuccess(_ context.Context, in *awssfn.SendTaskSuccessInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskSuccessOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.success[*in.TaskToken] = *in.Output
	f.reported()
	return &awssfn.SendTaskSuccessOutput{}, nil
}

func (f *fakeTasks) SendTaskFailure(_ context.Context, in *awssfn.SendTaskFailureInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskFailureOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failure[*in.TaskToken] = [2]string{*in.Error, *in.Cause}
	f.reported()
	return &awssfn.SendTaskFailureOutput{}, nil
}

func (f *fakeTasks) SendTaskHeartbeat(context.Context, *awssfn.SendTaskHeartbeatInput, ...func(*awssfn.Options)) (*awssfn.SendTaskHeartbeatOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heartbeats++
	return &awssfn.SendTaskHeartbeatOutput{}, nil
}

func TestWorkerReportsResults(t *testing.T) {
	t.Parallel()
	api := newFakeTasks(`{"step":"ok"}`, `{"step":"bad"}`, `{"step":"nope"}`)
	ticks := make(chan time.Time)
	beat := make(chan struct{})
	reg := pipeline.NewRegistry()
	reg.Register("ok", pipeline.HandlerFunc(func(ctx context.Context, p []byte) ([]byte, error) {
		ticks <- time.Now() // one heartbeat while the task runs
		close(beat)
		return json.Marshal(pipeline.StepOutput{Step: "ok"})
	}))
	reg.Register("bad", pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) {
		return nil, &steperr.InvalidDocumentError{Reason: "broken"}
	}))
	ctx, cancel := context.WithCancel(t.Context())
	w := &Worker{API: api, Handler: reg, Activities: []string{"a1", "a2"}, TaskOptions: TaskOptions{Concurrency: 2,
		NewTicker: func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }}}
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx) }()
	<-api.done
	<-beat
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if api.heartbeats != 1 {
		t.Errorf("%d heartbeats, want 1", api.heartbeats)
	}
	if got := api.success[`tok-{"step":"ok"}`]; got != `{"step":"ok"}` {
		t.Errorf("ok output %q", got)
	}
	if got := api.failure[`tok-{"step":"bad"}`]; got[0] != steperr.NameInvalidDocument || got[1] != "invalid document: broken" {
		t.Errorf("bad failure %q", got)
	}
	if got := api.failure[`tok-{"step":"nope"}`]; got[0] != steperr.NameInvalidInput {
		t.Errorf("unknown step failure %q", got)
	}
}

func TestWorkerShutdownFailsRunningTaskAsTransient(t *testing.T) {
	t.Parallel()
	api := newFakeTasks(`{"step":"slow"}`)
	started := make(chan struct{})
	reg := pipeline.NewRegistry()
	reg.Register("slow", pipeline.HandlerFunc(func(ctx context.Context, _ []byte) ([]byte, error) {
		close(started)
		<-ctx.Done() // runs until the grace period ends
		return nil, ctx.Err()
	}))
	ctx, cancel := context.WithCancel(t.Context())
	w := &Worker{API: api, Handler: reg, Activities: []string{"a"}, TaskOptions: TaskOptions{ShutdownGrace: time.Millisecond}}
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx) }()
	<-started
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := api.failure[`tok-{"step":"slow"}`]; got[0] != steperr.NameTransient {
		t.Fatalf("failure %q, want %s so the state machine retries", got, steperr.NameTransient)
	}
}
