package sfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// fakeQueue is one SQS queue and the Step Functions callback API. Message
// receipt handles are the bodies, so results and deletions can be matched.
type fakeQueue struct {
	mu       sync.Mutex
	pending  []string
	arrived  chan struct{} // signaled when a message is queued
	asked    []int32       // MaxNumberOfMessages of every receive
	deleted  []string
	extended map[string]int
	beats    map[string]int
	success  map[string]string    // token → output
	failure  map[string][2]string // token → error, cause
	// sendErr fails the next report of a token with the error.
	sendErr map[string]error
	beatErr map[string]error
	// earlyDelete records deletions that came before the token's report.
	earlyDelete []string
	changed     chan struct{} // signaled on every delete
}

func newFakeQueue() *fakeQueue {
	return &fakeQueue{
		arrived: make(chan struct{}, 100), changed: make(chan struct{}, 100), extended: map[string]int{}, beats: map[string]int{},
		success: map[string]string{}, failure: map[string][2]string{}, sendErr: map[string]error{}, beatErr: map[string]error{},
	}
}

// task returns a message body for step with token tok.
// waitHeartbeat ticks (for up to 10 s) until tok has been heartbeaten and
// its message's visibility extended.
func (f *fakeQueue) waitHeartbeat(tok, receipt string, ticks chan<- time.Time) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		done := f.beats[tok] > 0 && f.extended[receipt] > 0
		f.mu.Unlock()
		if done {
			return
		}
		select {
		case ticks <- time.Now():
		case <-time.After(time.Millisecond):
		}
	}
}

func task(step, tok string) string {
	b, _ := json.Marshal(map[string]any{
		"step": step, "workflow": pipeline.WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}, "task_token": tok,
	})
	return string(b)
}

func (f *fakeQueue) push(bodies ...string) {
	f.mu.Lock()
	f.pending = append(f.pending, bodies...)
	f.mu.Unlock()
	f.arrived <- struct{}{}
}

func (f *fakeQueue) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	for {
		f.mu.Lock()
		if len(f.pending) > 0 {
			f.asked = append(f.asked, in.MaxNumberOfMessages)
			n := min(len(f.pending), int(in.MaxNumberOfMessages))
			var out []sqstypes.Message
			for i, b := range f.pending[:n] {
				out = append(out, sqstypes.Message{MessageId: aws.String(fmt.Sprint(i)), ReceiptHandle: aws.String(b), Body: aws.String(b)})
			}
			f.pending = f.pending[n:]
			f.mu.Unlock()
			return &sqs.ReceiveMessageOutput{Messages: out}, nil
		}
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-f.arrived:
		}
	}
}

func (f *fakeQueue) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.extended[*in.ReceiptHandle]++
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func tokenOf(body string) string {
	var m struct {
		Token string `json:"task_token"`
	}
	_ = json.Unmarshal([]byte(body), &m)
	return m.Token
}

func (f *fakeQueue) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := *in.ReceiptHandle
	if tok := tokenOf(h); tok != "" {
		_, ok1 := f.success[tok]
		_, ok2 := f.failure[tok]
		if !ok1 && !ok2 && f.sendErr[tok] == nil && f.beatErr[tok] == nil {
			f.earlyDelete = append(f.earlyDelete, h)
		}
	}
	f.deleted = append(f.deleted, h)
	f.changed <- struct{}{}
	return &sqs.DeleteMessageOutput{}, nil
}

func (f *fakeQueue) takeErr(tok string) error {
	err := f.sendErr[tok]
	delete(f.sendErr, tok)
	return err
}

func (f *fakeQueue) SendTaskSuccess(_ context.Context, in *awssfn.SendTaskSuccessInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskSuccessOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.takeErr(*in.TaskToken); err != nil {
		return nil, err
	}
	f.success[*in.TaskToken] = *in.Output
	return &awssfn.SendTaskSuccessOutput{}, nil
}

func (f *fakeQueue) SendTaskFailure(_ context.Context, in *awssfn.SendTaskFailureInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskFailureOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.takeErr(*in.TaskToken); err != nil {
		return nil, err
	}
	f.failure[*in.TaskToken] = [2]string{*in.Error, *in.Cause}
	return &awssfn.SendTaskFailureOutput{}, nil
}

func (f *fakeQueue) SendTaskHeartbeat(_ context.Context, in *awssfn.SendTaskHeartbeatInput, _ ...func(*awssfn.Options)) (*awssfn.SendTaskHeartbeatOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beats[*in.TaskToken]++
	if err := f.beatErr[*in.TaskToken]; err != nil {
		return nil, err
	}
	return &awssfn.SendTaskHeartbeatOutput{}, nil
}

// waitDeleted waits until n messages were deleted.
func (f *fakeQueue) waitDeleted(t *testing.T, n int) {
	t.Helper()
	for {
		f.mu.Lock()
		got := len(f.deleted)
		f.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-f.changed:
		case <-t.Context().Done():
			t.Fatalf("%d of %d messages deleted", got, n)
		}
	}
}

func startQueueWorker(t *testing.T, w *QueueWorker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- w.Run(ctx) }()
	return func() {
		cancel()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

func manualTicker(ch chan time.Time) func(time.Duration) (<-chan time.Time, func()) {
	return func(time.Duration) (<-chan time.Time, func()) { return ch, func() {} }
}

func TestQueueWorkerReportsThenDeletes(t *testing.T) {
	t.Parallel()
	q := newFakeQueue()
	ticks := make(chan time.Time)
	reg := pipeline.NewRegistry()
	var seen sync.Map
	reg.Register("ok", pipeline.HandlerFunc(func(_ context.Context, p []byte) ([]byte, error) {
		var in pipeline.StepInput
		if err := json.Unmarshal(p, &in); err != nil {
			return nil, err
		}
		seen.Store("ok", in.Workflow.WorkflowID)
		// Tick until this task has heartbeaten: the ticker channel is
		// shared by every running task, so a tick may serve another one.
		// Ending the task first would rightly cancel its heartbeat.
		q.waitHeartbeat("t-ok", task("ok", "t-ok"), ticks)
		return json.Marshal(pipeline.StepOutput{Step: "ok"})
	}))
	reg.Register("bad", pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) {
		return nil, &steperr.InvalidDocumentError{Reason: "broken"}
	}))
	q.push(task("ok", "t-ok"), task("bad", "t-bad"), task("nope", "t-nope"))
	stop := startQueueWorker(t, &QueueWorker{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: TaskOptions{Concurrency: 3, NewTicker: manualTicker(ticks)}})
	q.waitDeleted(t, 3)
	stop()

	if v, _ := seen.Load("ok"); v != "w" {
		t.Errorf("handler saw workflow %v", v)
	}
	if got := q.success["t-ok"]; got != `{"step":"ok"}` {
		t.Errorf("ok output %q", got)
	}
	if q.beats["t-ok"] < 1 || q.extended[task("ok", "t-ok")] < 1 {
		t.Errorf("%d heartbeats, %d visibility extensions; want at least 1 each", q.beats["t-ok"], q.extended[task("ok", "t-ok")])
	}
	if got := q.failure["t-bad"]; got != [2]string{steperr.NameInvalidDocument, "invalid document: broken"} {
		t.Errorf("bad failure %q", got)
	}
	if got := q.failure["t-nope"]; got[0] != steperr.NameInvalidInput {
		t.Errorf("unknown step failure %q", got)
	}
	if len(q.earlyDelete) > 0 {
		t.Errorf("deleted before reporting: %q", q.earlyDelete)
	}
	if !slices.Equal(q.asked, []int32{3}) {
		t.Errorf("receives asked for %v messages, want one receive of 3", q.asked)
	}
}

func TestQueueWorkerReceivesOnlyForFreeSlots(t *testing.T) {
	t.Parallel()
	q := newFakeQueue()
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	reg := pipeline.NewRegistry()
	reg.Register("slow", pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) {
		started <- struct{}{}
		<-release
		return nil, nil
	}))
	reg.Register("fast", pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) { return nil, nil }))
	q.push(task("slow", "a"), task("slow", "b"))
	stop := startQueueWorker(t, &QueueWorker{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: TaskOptions{Concurrency: 3, NewTicker: manualTicker(nil)}})
	<-started
	<-started
	q.push(task("fast", "c"), task("fast", "d"))
	q.waitDeleted(t, 2) // the fast ones, in the one free slot
	close(release)
	q.waitDeleted(t, 4)
	stop()
	if len(q.asked) < 3 || q.asked[0] != 3 || q.asked[1] != 1 || q.asked[2] != 1 {
		t.Errorf("receives asked for %v messages, want 3, then 1 and 1 while two slots are busy", q.asked)
	}
	if len(q.success) != 4 {
		t.Errorf("%d successes, want 4", len(q.success))
	}
}

func TestQueueWorkerDeadTokens(t *testing.T) {
	t.Parallel()
	q := newFakeQueue()
	reg := pipeline.NewRegistry()
	reg.Register("ok", pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) { return nil, nil }))
	reg.Register("bad", pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) {
		return nil, &steperr.TransientError{Reason: "later"}
	}))
	q.sendErr["timed-out"] = &types.TaskTimedOut{Message: aws.String("late")}
	q.sendErr["gone"] = &types.TaskDoesNotExist{Message: aws.String("gone")}
	q.sendErr["invalid"] = &types.InvalidToken{Message: aws.String("bad token")}
	q.push(task("ok", "timed-out"), task("bad", "gone"), task("ok", "invalid"))
	stop := startQueueWorker(t, &QueueWorker{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: TaskOptions{Concurrency: 3, NewTicker: manualTicker(nil)}})
	q.waitDeleted(t, 3)
	stop()
	if len(q.success)+len(q.failure) != 0 {
		t.Errorf("reports recorded for dead tokens: %v %v", q.success, q.failure)
	}
}

func TestQueueWorkerKeepsMessageWhenReportFails(t *testing.T) {
	t.Parallel()
	q := newFakeQueue()
	reg := pipeline.NewRegistry()
	var runs atomic.Int32
	ran := make(chan struct{}, 2)
	reg.Register("ok", pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) {
		runs.Add(1)
		ran <- struct{}{}
		return nil, nil
	}))
	q.sendErr["t"] = errors.New("connection reset")
	stop := startQueueWorker(t, &QueueWorker{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: TaskOptions{NewTicker: manualTicker(nil)}})
	q.push(task("ok", "t"))
	<-ran
	q.push(task("ok", "t")) // SQS redelivers it after its visibility timeout
	q.waitDeleted(t, 1)
	stop()
	if runs.Load() != 2 || len(q.deleted) != 1 || q.success["t"] != "{}" {
		t.Errorf("runs %d, deleted %d, success %q: want the message kept after the failed report and done on redelivery", runs.Load(), len(q.deleted), q.success["t"])
	}
}

func TestQueueWorkerMalformedMessages(t *testing.T) {
	t.Parallel()
	q := newFakeQueue()
	reg := pipeline.NewRegistry()
	q.push(`not json`, `{"step":"ok"}`, `{"step":7,"task_token":"t-typed"}`, `{"task_token":"t-nostep"}`)
	stop := startQueueWorker(t, &QueueWorker{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: TaskOptions{NewTicker: manualTicker(nil)}})
	q.waitDeleted(t, 4)
	stop()
	for _, tok := range []string{"t-typed", "t-nostep"} {
		if got := q.failure[tok]; got[0] != steperr.NameInvalidInput {
			t.Errorf("%s: failure %q, want %s", tok, got, steperr.NameInvalidInput)
		}
	}
	if len(q.failure) != 2 || len(q.success) != 0 {
		t.Errorf("reports %v %v", q.success, q.failure)
	}
}

func TestQueueWorkerAbandonedTask(t *testing.T) {
	t.Parallel()
	q := newFakeQueue()
	ticks := make(chan time.Time)
	reg := pipeline.NewRegistry()
	canceled := make(chan error, 1)
	reg.Register("slow", pipeline.HandlerFunc(func(ctx context.Context, _ []byte) ([]byte, error) {
		ticks <- time.Now()
		<-ctx.Done() // the heartbeat finds the execution gone
		canceled <- ctx.Err()
		return nil, ctx.Err()
	}))
	q.beatErr["t"] = &types.TaskTimedOut{Message: aws.String("gone")}
	q.push(task("slow", "t"))
	stop := startQueueWorker(t, &QueueWorker{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: TaskOptions{NewTicker: manualTicker(ticks)}})
	q.waitDeleted(t, 1)
	stop()
	if err := <-canceled; err == nil {
		t.Error("handler not canceled")
	}
	if len(q.failure)+len(q.success) != 0 {
		t.Errorf("reported an abandoned task: %v %v", q.success, q.failure)
	}
}

func TestQueueWorkerShutdownFailsRunningTaskAsTransient(t *testing.T) {
	t.Parallel()
	q := newFakeQueue()
	started := make(chan struct{})
	reg := pipeline.NewRegistry()
	reg.Register("slow", pipeline.HandlerFunc(func(ctx context.Context, _ []byte) ([]byte, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	q.push(task("slow", "t"))
	stop := startQueueWorker(t, &QueueWorker{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: TaskOptions{ShutdownGrace: time.Millisecond, NewTicker: manualTicker(nil)}})
	<-started
	stop()
	if got := q.failure["t"]; got[0] != steperr.NameTransient {
		t.Fatalf("failure %q, want %s so the state machine retries", got, steperr.NameTransient)
	}
	if len(q.deleted) != 1 {
		t.Errorf("%d messages deleted, want 1", len(q.deleted))
	}
}

func TestQueueWorkerConfig(t *testing.T) {
	t.Parallel()
	q := newFakeQueue()
	reg := pipeline.NewRegistry()
	for _, w := range []*QueueWorker{
		{API: q, Queue: q, Handler: reg},
		{API: q, QueueURL: "q", Handler: reg},
		{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: TaskOptions{Heartbeat: time.Minute}},
		{API: q, Queue: q, QueueURL: "q", Handler: reg, TaskOptions: TaskOptions{Heartbeat: 30 * time.Second}},
	} {
		if err := w.Run(t.Context()); err == nil {
			t.Errorf("%+v: ran", w)
		}
	}
	if v := (&QueueWorker{TaskOptions: TaskOptions{Heartbeat: 1500 * time.Millisecond}}).visibility(); v != 5 {
		t.Errorf("visibility %d s, want three heartbeats rounded up", v)
	}
}
