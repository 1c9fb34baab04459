package sfn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"golang.org/x/sync/semaphore"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/statemachine"
)

// CallbackAPI is the part of the Step Functions API that reports on a task
// by its token: activity and queue workers alike.
type CallbackAPI interface {
	SendTaskSuccess(ctx context.Context, in *awssfn.SendTaskSuccessInput, optFns ...func(*awssfn.Options)) (*awssfn.SendTaskSuccessOutput, error)
	SendTaskFailure(ctx context.Context, in *awssfn.SendTaskFailureInput, optFns ...func(*awssfn.Options)) (*awssfn.SendTaskFailureOutput, error)
	SendTaskHeartbeat(ctx context.Context, in *awssfn.SendTaskHeartbeatInput, optFns ...func(*awssfn.Options)) (*awssfn.SendTaskHeartbeatOutput, error)
}

// API limits of SendTaskFailure (and StopExecution).
const (
	maxErrorLen = 256
	maxCauseLen = 32768
)

// Defaults of TaskOptions.
const (
	// DefaultHeartbeat beats three times within the definitions'
	// HeartbeatSeconds, so one lost heartbeat does not time a task out.
	DefaultHeartbeat     = 20 * time.Second
	DefaultShutdownGrace = 30 * time.Second
	// pollBackoff spaces polls after a failed GetActivityTask or
	// ReceiveMessage.
	pollBackoff = 2 * time.Second
	// reportTimeout bounds sending a task's result, which must outlive the
	// worker's canceled context.
	reportTimeout = 30 * time.Second
)

// TaskOptions are how a worker runs the tasks it receives; Worker and
// QueueWorker share them. The zero value is usable.
type TaskOptions struct {
	// Concurrency bounds the tasks running at once (for activities, plus
	// outstanding polls); the default depends on the worker.
	Concurrency int
	// Heartbeat is the interval of SendTaskHeartbeat while a task runs.
	// Default DefaultHeartbeat.
	Heartbeat time.Duration
	// HeartbeatTimeout is the served states' HeartbeatSeconds; Heartbeat
	// must beat at least twice within it. Default
	// statemachine.TaskHeartbeatSeconds, what the generator sets.
	HeartbeatTimeout time.Duration
	// ShutdownGrace is how long running tasks may finish after Run's
	// context is canceled; then they are canceled and reported as
	// transient failures, so the state machine retries them elsewhere.
	ShutdownGrace time.Duration
	Logger        *slog.Logger
	// NewTicker makes the heartbeat ticker (tests inject their own).
	NewTicker func(d time.Duration) (<-chan time.Time, func())
	// ErrorName names a failed task's error for the state machine's Retry
	// and Catch; "" sends the failure without a name. Default steperr.Name.
	ErrorName func(error) string
}

// CheckHeartbeat returns an error unless a task beating every interval
// beats at least twice within timeout, so one lost or late heartbeat does
// not time the task out.
func CheckHeartbeat(interval, timeout time.Duration) error {
	if interval <= 0 {
		return fmt.Errorf("sfn: heartbeat interval %v must be positive", interval)
	}
	if 2*interval >= timeout {
		return fmt.Errorf("sfn: heartbeat interval %v does not beat twice within the task's %v heartbeat timeout (HeartbeatSeconds); use an interval under %v",
			interval, timeout, timeout/2)
	}
	return nil
}

func (o TaskOptions) withDefaults(concurrency int) TaskOptions {
	if o.Concurrency <= 0 {
		o.Concurrency = concurrency
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = statemachine.TaskHeartbeatSeconds * time.Second
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.NewTicker == nil {
		o.NewTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	if o.ErrorName == nil {
		o.ErrorName = steperr.Name
	}
	return o
}

// taskRunner runs the tasks a worker receives: at most Concurrency at once,
// each with heartbeats, each reported with SendTaskSuccess or
// SendTaskFailure. A worker only fetches tasks (holding a slot from
// acquire for each) and acknowledges them.
type taskRunner struct {
	api     CallbackAPI
	handler pipeline.Handler
	opts    TaskOptions
	sem     *semaphore.Weighted
	running sync.WaitGroup
	// taskCtx outlives the worker's context by the shutdown grace.
	taskCtx     context.Context
	cancelTasks context.CancelCauseFunc
	stopGrace   func() bool
}

var errShutdown = errors.New("worker shut down before the task finished")

// newTaskRunner checks the options and starts a runner whose tasks get
// ShutdownGrace to finish once ctx ends; close it when ctx has ended and
// no more tasks are started.
func newTaskRunner(ctx context.Context, api CallbackAPI, h pipeline.Handler, opts TaskOptions, defaultConcurrency int) (*taskRunner, error) {
	opts = opts.withDefaults(defaultConcurrency)
	if err := CheckHeartbeat(opts.Heartbeat, opts.HeartbeatTimeout); err != nil {
		return nil, err
	}
	r := &taskRunner{api: api, handler: h, opts: opts, sem: semaphore.NewWeighted(int64(opts.Concurrency))}
	r.taskCtx, r.cancelTasks = context.WithCancelCause(context.WithoutCancel(ctx))
	grace := opts.ShutdownGrace
	r.stopGrace = context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, func() { r.cancelTasks(errShutdown) })
		context.AfterFunc(r.taskCtx, func() { t.Stop() })
	})
	return r, nil
}

// close waits for the running tasks (canceled when the grace period ends).
func (r *taskRunner) close() {
	r.running.Wait()
	r.stopGrace()
	r.cancelTasks(nil)
}

// acquire waits for one free slot, then takes up to n-1 more that are free
// now. It returns how many it holds; 0 when ctx ended first.
func (r *taskRunner) acquire(ctx context.Context, n int) int {
	if r.sem.Acquire(ctx, 1) != nil {
		return 0
	}
	got := 1
	for got < n && r.sem.TryAcquire(1) {
		got++
	}
	return got
}

// release hands back slots no task came for.
func (r *taskRunner) release(n int) {
	if n > 0 {
		r.sem.Release(int64(n))
	}
}

// spawn runs task in the background on one acquired slot, under the task
// context, and frees the slot when it returns.
func (r *taskRunner) spawn(task func(ctx context.Context)) {
	r.running.Go(func() {
		defer r.sem.Release(1)
		task(r.taskCtx)
	})
}

// run invokes the handler on input, sending a heartbeat for token (and
// calling onBeat, when set) every Heartbeat, then reports the result.
// abandoned means the state machine no longer waits for the token (timed
// out, aborted), so nothing was reported; err is a failure to report,
// after which the task's result is lost unless it runs again.
func (r *taskRunner) run(ctx context.Context, log *slog.Logger, token string, input []byte, onBeat func(context.Context)) (abandoned bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tick, stopTick := r.opts.NewTicker(r.opts.Heartbeat)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick:
				_, err := r.api.SendTaskHeartbeat(ctx, &awssfn.SendTaskHeartbeatInput{TaskToken: aws.String(token)})
				if taskGone(err) {
					// The execution stopped waiting (timed out, aborted):
					// the result would be thrown away.
					log.Warn("task abandoned by the state machine", "err", err)
					cancel(err)
					return
				}
				if err != nil && ctx.Err() == nil {
					log.Warn("heartbeat failed", "err", err)
				}
				if onBeat != nil {
					onBeat(ctx)
				}
			}
		}
	}()
	out, err := r.handler.Invoke(ctx, input)
	stopTick()
	cause := context.Cause(ctx)
	cancel(nil)
	<-hbDone

	if taskGone(cause) {
		return true, nil
	}
	if err != nil && errors.Is(cause, errShutdown) {
		err = &steperr.TransientError{Reason: errShutdown.Error()}
	}
	var pending *steperr.ReviewPendingError
	if errors.As(err, &pending) && pending.Callback {
		// The token is on the review now: its decision reports the task.
		log.Info("task waits for a review", "review", pending.Reason)
		return false, nil
	}
	if err != nil {
		return r.fail(ctx, log, token, err)
	}
	if len(out) == 0 {
		out = []byte("{}")
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer rcancel()
	_, serr := r.api.SendTaskSuccess(rctx, &awssfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(string(out))})
	if taskGone(serr) {
		log.Warn("task result too late: the state machine stopped waiting", "err", serr)
		return true, nil
	}
	return false, serr
}

// fail reports err as the task's failure, named for the state machine's
// Retry and Catch. It is sent even when ctx has ended.
func (r *taskRunner) fail(ctx context.Context, log *slog.Logger, token string, err error) (abandoned bool, serr error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	name := r.opts.ErrorName(err)
	log.Info("task failed", "error", name, "cause", err)
	in := &awssfn.SendTaskFailureInput{TaskToken: aws.String(token), Cause: aws.String(truncate(err.Error(), maxCauseLen))}
	if name != "" {
		in.Error = aws.String(truncate(name, maxErrorLen))
	}
	_, serr = r.api.SendTaskFailure(ctx, in)
	if taskGone(serr) {
		log.Warn("task failure too late: the state machine stopped waiting", "err", serr)
		return true, nil
	}
	return false, serr
}

// taskGone reports errors meaning the task token is no longer awaited.
func taskGone(err error) bool {
	var timedOut *types.TaskTimedOut
	var missing *types.TaskDoesNotExist
	var invalid *types.InvalidToken
	return errors.As(err, &timedOut) || errors.As(err, &missing) || errors.As(err, &invalid)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
