package sfn

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/docpipe/docpipe/pipeline"
)

// TaskAPI is the part of the Step Functions API an activity worker uses.
// *sfn.Client implements it.
type TaskAPI interface {
	GetActivityTask(ctx context.Context, in *awssfn.GetActivityTaskInput, optFns ...func(*awssfn.Options)) (*awssfn.GetActivityTaskOutput, error)
	CallbackAPI
}

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
	// TaskOptions run the tasks; Concurrency defaults to the number of
	// activities.
	TaskOptions
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
	r, err := newTaskRunner(ctx, w.API, w.Handler, w.TaskOptions, len(w.Activities))
	if err != nil {
		return err
	}
	defer r.close()
	var pollers sync.WaitGroup
	for _, act := range w.Activities {
		pollers.Go(func() { w.poll(ctx, r, act) })
	}
	pollers.Wait()
	return nil
}

func (w *Worker) poll(ctx context.Context, r *taskRunner, activity string) {
	log := r.opts.Logger.With("activity", activity)
	for ctx.Err() == nil {
		if r.acquire(ctx, 1) == 0 {
			return
		}
		out, err := w.API.GetActivityTask(ctx, &awssfn.GetActivityTaskInput{ActivityArn: aws.String(activity), WorkerName: optional(w.Name)})
		if err != nil || out.TaskToken == nil || *out.TaskToken == "" {
			r.release(1)
			if err != nil && ctx.Err() == nil {
				log.Warn("poll failed", "err", err)
				sleep(ctx, pollBackoff)
			}
			continue
		}
		r.spawn(func(ctx context.Context) {
			if _, err := r.run(ctx, log, *out.TaskToken, []byte(aws.ToString(out.Input)), nil); err != nil {
				log.Warn("could not report task result", "err", err)
			}
		})
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// String describes the worker for logs.
func (w *Worker) String() string {
	return fmt.Sprintf("worker %q: %d activities", w.Name, len(w.Activities))
}
