package sfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/statemachine"
)

// QueueAPI is the part of the SQS API a queue worker uses. *sqs.Client
// implements it.
type QueueAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// SQS limits and the queue worker's polling.
const (
	maxReceive = 10 // ReceiveMessage's MaxNumberOfMessages ceiling
	// QueueWaitSeconds is the long poll of every ReceiveMessage (SQS's
	// maximum), so an idle worker makes three requests a minute.
	QueueWaitSeconds = 20
)

// QueueWorker serves the tasks a ModeQueue state machine sends to one SQS
// queue with their task tokens: it runs each message's step and reports the
// result to Step Functions, and only then deletes the message. A message is
// redelivered when its worker dies before reporting, so the step runs again
// (steps are idempotent) and the task still gets its answer.
type QueueWorker struct {
	API      CallbackAPI
	Queue    QueueAPI
	QueueURL string
	Handler  pipeline.Handler
	// Visibility is how long a received message stays hidden from other
	// workers; it is renewed every heartbeat. Default three heartbeats.
	Visibility time.Duration
	// TaskOptions run the tasks; Concurrency defaults to twice the cores.
	// Messages are received only for free slots.
	TaskOptions
}

func (w *QueueWorker) visibility() int32 {
	v := w.Visibility
	if v <= 0 {
		v = 3 * w.withDefaults(0).Heartbeat
	}
	return int32(max(1, (v+time.Second-1)/time.Second))
}

// Run receives and runs tasks until ctx is canceled, then stops receiving,
// lets running tasks finish within ShutdownGrace, and returns nil. It
// returns an error only for a configuration it cannot run.
func (w *QueueWorker) Run(ctx context.Context) error {
	if w.API == nil || w.Queue == nil || w.Handler == nil {
		return errors.New("sfn: queue worker needs a Step Functions API, a queue API and a handler")
	}
	if w.QueueURL == "" {
		return errors.New("sfn: queue worker has no queue URL")
	}
	r, err := newTaskRunner(ctx, w.API, w.Handler, w.TaskOptions, 2*runtime.GOMAXPROCS(0))
	if err != nil {
		return err
	}
	defer r.close()
	log := r.opts.Logger.With("queue", w.QueueURL)
	for ctx.Err() == nil {
		free := r.acquire(ctx, min(r.opts.Concurrency, maxReceive))
		if free == 0 {
			break
		}
		out, err := w.Queue.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(w.QueueURL), MaxNumberOfMessages: int32(free),
			WaitTimeSeconds: QueueWaitSeconds, VisibilityTimeout: w.visibility(),
		})
		var msgs []sqstypes.Message
		if err == nil {
			msgs = out.Messages
		}
		if len(msgs) > free {
			// More than asked for: the extra ones reappear after their
			// visibility timeout, when a slot is free.
			log.Warn("queue returned more messages than asked for", "asked", free, "got", len(msgs))
			msgs = msgs[:free]
		}
		// Hand back the slots no message came for.
		r.release(free - len(msgs))
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("receive failed", "err", err)
				sleep(ctx, pollBackoff)
			}
			continue
		}
		for _, m := range msgs {
			r.spawn(func(ctx context.Context) { w.handle(ctx, r, log, m) })
		}
	}
	return nil
}

// queueMessage is a task message: the step's input plus its token.
type queueMessage struct {
	pipeline.StepInput
	TaskToken string `json:"task_token"`
}

// handle runs one message's task and deletes the message once the state
// machine has its answer or no longer wants one.
func (w *QueueWorker) handle(ctx context.Context, r *taskRunner, log *slog.Logger, m sqstypes.Message) {
	log = log.With("message", aws.ToString(m.MessageId))
	body := []byte(aws.ToString(m.Body))
	token, err := parseTask(body)
	if token == "" {
		log.Error("dropping a message without a task token: nothing can be reported", "err", err)
		w.delete(ctx, log, m)
		return
	}
	log = log.With("step", stepOf(body))
	var abandoned bool
	if err != nil {
		abandoned, err = r.fail(ctx, log, token, err)
	} else {
		abandoned, err = r.run(ctx, log, token, body, func(ctx context.Context) { w.extend(ctx, log, m) })
	}
	if err != nil {
		// Left on the queue: it comes back after its visibility timeout,
		// and the task runs and reports again.
		log.Warn("could not report task result; the message will be redelivered", "err", err)
		return
	}
	if abandoned {
		log.Info("deleting the message of a task the state machine no longer waits for")
	}
	w.delete(ctx, log, m)
}

// parseTask returns the message's task token and, when the message is not
// a valid task, why. A message without a token returns "".
func parseTask(body []byte) (string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return "", &steperr.InvalidInputError{Reason: fmt.Sprintf("message is not a JSON object: %v", err)}
	}
	var token string
	if json.Unmarshal(raw[statemachine.QueueTaskTokenField], &token) != nil || token == "" {
		return "", &steperr.InvalidInputError{Reason: "message has no " + statemachine.QueueTaskTokenField}
	}
	var msg queueMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		return token, &steperr.InvalidInputError{Reason: fmt.Sprintf("message is not a step input: %v", err)}
	}
	if msg.Step == "" {
		return token, &steperr.InvalidInputError{Reason: "message names no step"}
	}
	return token, nil
}

func stepOf(body []byte) string {
	var head struct {
		Step string `json:"step"`
	}
	_ = json.Unmarshal(body, &head) // already parsed once; only for logs
	return head.Step
}

// extend keeps a running task's message hidden from other workers.
func (w *QueueWorker) extend(ctx context.Context, log *slog.Logger, m sqstypes.Message) {
	_, err := w.Queue.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(w.QueueURL), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: w.visibility(),
	})
	if err != nil && ctx.Err() == nil {
		// Another worker may run the task too; its report is then the one
		// too late, which is harmless.
		log.Warn("could not extend message visibility", "err", err)
	}
}

func (w *QueueWorker) delete(ctx context.Context, log *slog.Logger, m sqstypes.Message) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
	defer cancel()
	if _, err := w.Queue.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(w.QueueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
		// Redelivered later: the task then reports too late and the
		// message is deleted then.
		log.Warn("could not delete message", "err", err)
	}
}
