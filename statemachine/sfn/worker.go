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
)

// TaskAPI is the part of the Step Functions API an activity worker uses.
// *sfn.Client implements it.
type TaskAPI interface {
	GetActivityTask(ctx context.Context, in *awssfn.GetActivityTaskInput, optFns ...func(*awssfn.Options)) (*awssfn.GetActivityTaskOutput, error)
	CallbackAPI
}

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

// Defaults of a Worker.
const (
	// DefaultHeartbeat is well inside the definitions' HeartbeatSeconds
	// (60), so one lost heartbeat does not time a task out.
	DefaultHeartbeat     = 20 * time.Second
	DefaultShutdownGrace = 30 * time.Second
	// pollBackoff spaces polls after a failed GetActivityTask.
	pollBackoff = 2 * time.Second
	// reportTimeout bounds sending a task's result, which must outlive the
	// worker's canceled context.
	reportTimeout = 30 * time.Second
)

// Worker serves Step Functions activities with step handlers: one poller per
// activity, at most Concurrency tasks at once across all of them. A poller
// holds a slot while it long-polls, so no task is claimed (its timeout
// running) that the worker has no room to run.
type Worker struct {
	API     TaskAPI
	Handler pipeline.Handler
	// Activities are the ARNs of the activities to serve.
	Activities []string
	// Name is reported to Step Functions with every poll (history, logs).
	Name string
	// Concurrency bounds running tasks plus outstanding polls; default the
	// number of activities.
	Concurrency int
	// Heartbeat is the interval of SendTaskHeartbeat while a task runs.
	Heartbeat time.Duration
	// ShutdownGrace is how long running tasks may finish after Run's
	// context is canceled; then they are canceled and reported as
	// transient failures, so the state machine retries them elsewhere.
	ShutdownGrace time.Duration
	Logger        *slog.Logger
	// NewTicker makes the heartbeat ticker (tests inject their own).
	NewTicker func(d time.Duration) (<-chan time.Time, func())
}

func (w *Worker) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (w *Worker) ticker(d time.Duration) (<-chan time.Time, func()) {
	if w.NewTicker != nil {
		return w.NewTicker(d)
	}
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Run polls until ctx is canceled, then stops polling, lets running tasks
// finish within ShutdownGrace, and returns nil. It returns an error only
// for a configuration it cannot run.
func (w *Worker) Run(ctx context.Context) error {
	if len(w.Activities) == 0 {
		return errors.New("sfn: worker has no activities to serve")
	}
	if w.API == nil || w.Handler == nil {
		return errors.New("sfn: worker needs an API and a handler")
	}
	n := w.Concurrency
	if n <= 0 {
		n = len(w.Activities)
	}
	grace := w.ShutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	// Tasks run under taskCtx: it outlives ctx by the grace period.
	taskCtx, cancelTasks := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelTasks(nil)
	stopGrace := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, func() { cancelTasks(errShutdown) })
		context.AfterFunc(taskCtx, func() { t.Stop() })
	})
	defer stopGrace()

	sem := semaphore.NewWeighted(int64(n))
	var running sync.WaitGroup
	var pollers sync.WaitGroup
	for _, act := range w.Activities {
		pollers.Go(func() { w.poll(ctx, taskCtx, act, sem, &running) })
	}
	pollers.Wait()
	running.Wait()
	return nil
}

var errShutdown = errors.New("worker shut down before the task finished")

func (w *Worker) poll(ctx, taskCtx context.Context, activity string, sem *semaphore.Weighted, running *sync.WaitGroup) {
	log := w.logger().With("activity", activity)
	for ctx.Err() == nil {
		if err := sem.Acquire(ctx, 1); err != nil {
			return
		}
		out, err := w.API.GetActivityTask(ctx, &awssfn.GetActivityTaskInput{ActivityArn: aws.String(activity), WorkerName: optional(w.Name)})
		if err != nil || out.TaskToken == nil || *out.TaskToken == "" {
			sem.Release(1)
			if err != nil && ctx.Err() == nil {
				log.Warn("poll failed", "err", err)
				sleep(ctx, pollBackoff)
			}
			continue
		}
		running.Go(func() {
			defer sem.Release(1)
			w.runTask(taskCtx, log, *out.TaskToken, aws.ToString(out.Input))
		})
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// runTask runs one task with heartbeats and reports its result.
func (w *Worker) runTask(ctx context.Context, log *slog.Logger, token, input string) {
	hb := w.Heartbeat
	if hb <= 0 {
		hb = DefaultHeartbeat
	}
	tick, stopTick := w.ticker(hb)
	if _, err := runCallback(ctx, log, w.API, w.Handler, tick, stopTick, token, []byte(input), nil); err != nil {
		log.Warn("could not report task result", "err", err)
	}
}

// runCallback invokes h on input, sending a heartbeat for token (and
// calling onBeat, when set) on every tick, then reports the result with
// SendTaskSuccess or SendTaskFailure. abandoned means the state machine no
// longer waits for the token (timed out, aborted), so nothing was reported;
// err is a failure to report, after which the task's result is lost
// unless it runs again.
func runCallback(ctx context.Context, log *slog.Logger, api CallbackAPI, h pipeline.Handler, tick <-chan time.Time, stopTick func(), token string, input []byte, onBeat func(context.Context)) (abandoned bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick:
				_, err := api.SendTaskHeartbeat(ctx, &awssfn.SendTaskHeartbeatInput{TaskToken: aws.String(token)})
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
	out, err := h.Invoke(ctx, input)
	stopTick()
	cause := context.Cause(ctx)
	cancel(nil)
	<-hbDone

	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer rcancel()
	if taskGone(cause) {
		return true, nil
	}
	if err != nil && errors.Is(cause, errShutdown) {
		err = &steperr.TransientError{Reason: errShutdown.Error()}
	}
	if err != nil {
		return reportFailure(rctx, log, api, token, err)
	}
	if len(out) == 0 {
		out = []byte("{}")
	}
	_, serr := api.SendTaskSuccess(rctx, &awssfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(string(out))})
	if taskGone(serr) {
		log.Warn("task result too late: the state machine stopped waiting", "err", serr)
		return true, nil
	}
	return false, serr
}

// reportFailure sends err as the task's failure, named for the state
// machine's Retry and Catch.
func reportFailure(ctx context.Context, log *slog.Logger, api CallbackAPI, token string, err error) (abandoned bool, serr error) {
	name := steperr.Name(err)
	log.Info("task failed", "error", name, "cause", err)
	_, serr = api.SendTaskFailure(ctx, &awssfn.SendTaskFailureInput{
		TaskToken: aws.String(token), Error: aws.String(truncate(name, maxErrorLen)), Cause: aws.String(truncate(err.Error(), maxCauseLen)),
	})
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

// String describes the worker for logs.
func (w *Worker) String() string {
	return fmt.Sprintf("worker %q: %d activities", w.Name, len(w.Activities))
}
