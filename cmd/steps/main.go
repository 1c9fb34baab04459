// Command steps runs docpipe's step handlers for AWS Step Functions.
//
//	steps [lambda]   Lambda function: the payload's "step" picks the handler
//	steps worker     activity worker: polls every step's activity
//	steps worker --queue URL
//	                 queue worker: serves the tasks a queue-mode state
//	                 machine sends to an SQS queue
//
// Configuration: DOCPIPE_TABLE, DOCPIPE_BUCKET, DOCPIPE_PDF_BACKEND,
// DOCPIPE_TRANSCRIBE (aws: audio goes to Amazon Transcribe), and for
// the worker either DOCPIPE_TASK_QUEUE_URL or DOCPIPE_ACTIVITY_PREFIX (the
// definition's activity ARN prefix, or a name prefix completed from
// DOCPIPE_STATE_MACHINE_ARN), and DOCPIPE_PIPELINE_DIR where users' command
// stages live on the worker's machine; AWS settings from the SDK's chain.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awslambdaapi "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/stagerun/awslambda"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/statemachine"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(os.Args[1:], os.Getenv, logger, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		logger.Error("steps", "err", err)
		os.Exit(1)
	}
}

func run(args []string, getenv func(string) string, logger *slog.Logger, stderr io.Writer) error {
	mode := "lambda"
	if len(args) > 0 {
		mode, args = args[0], args[1:]
	}
	switch mode {
	case "lambda":
		return runLambda(getenv, logger)
	case "worker":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return runWorker(ctx, args, getenv, logger, stderr)
	}
	return fmt.Errorf("unknown mode %q (want lambda or worker)", mode)
}

// openRegistry opens DynamoDB and S3 and builds the step handlers. Users'
// Lambda stages are invoked with the same AWS configuration; pipelineDir,
// when set, is where users' commands run (see backend.StepOptions); audio
// is transcribed as backend.AWSTranscriber chooses, page images read as
// backend.AWSOCR chooses.
func openRegistry(ctx context.Context, getenv func(string) string, logger *slog.Logger, parallelism int, pipelineDir string) (*pipeline.Registry, backend.AWSClients, error) {
	cfg, err := backend.LoadAWSConfig(ctx, nil)
	if err != nil {
		return nil, backend.AWSClients{}, err
	}
	clients := backend.NewAWSClients(cfg)
	b, err := backend.OpenAWSWith(clients, backend.AWSOptions{Table: getenv(backend.EnvTable), Bucket: getenv(backend.EnvBucket)})
	if err != nil {
		return nil, clients, err
	}
	transcriber, err := backend.AWSTranscriber(getenv(backend.EnvTranscribe), clients, b)
	if err != nil {
		return nil, clients, err
	}
	ocrEngine, err := backend.AWSOCR(getenv(backend.EnvOCR), cfg)
	if err != nil {
		return nil, clients, err
	}
	reg, err := backend.Registry(b, backend.StepOptions{
		PDFBackend: getenv(backend.EnvPDFBackend), Logger: logger, Parallelism: parallelism,
		PipelineDir: pipelineDir, Lambda: awslambda.Invoker{Client: awslambdaapi.NewFromConfig(cfg)},
		Transcriber: transcriber, OCR: ocrEngine,
		AIModels: backend.AIClients(func(context.Context) (aws.Config, error) { return cfg, nil }, getenv),
	})
	return reg, clients, err
}

func runLambda(getenv func(string) string, logger *slog.Logger) error {
	reg, _, err := openRegistry(context.Background(), getenv, logger, 0, "")
	if err != nil {
		return err
	}
	lambda.Start(lambdaHandler(reg))
	return nil
}

// lambdaHandler adapts the registry to Lambda. Errors become the named
// step error types, whose type names Lambda reports as errorType: the
// names the state machine's Retry and Catch match.
func lambdaHandler(h pipeline.Handler) func(context.Context, json.RawMessage) (json.RawMessage, error) {
	return func(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
		out, err := h.Invoke(ctx, payload)
		var pending *steperr.ReviewPendingError
		if errors.As(err, &pending) && pending.Callback {
			// Invoked by lambda:invoke.waitForTaskToken: the result is
			// ignored; the review's decision reports the task.
			return json.RawMessage(`{}`), nil
		}
		if err != nil {
			return nil, steperr.Typed(err)
		}
		return out, nil
	}
}

type workerFlags struct {
	queue       string
	prefix      string
	steps       string
	concurrency int
	parallelism int
	heartbeat   time.Duration
	grace       time.Duration
	name        string
	pipelineDir string
}

// taskOptions are the flags both workers share.
func (f workerFlags) taskOptions(logger *slog.Logger) sfn.TaskOptions {
	return sfn.TaskOptions{Concurrency: f.concurrency, Heartbeat: f.heartbeat, ShutdownGrace: f.grace, Logger: logger}
}

func runWorker(ctx context.Context, args []string, getenv func(string) string, logger *slog.Logger, stderr io.Writer) error {
	f, err := parseWorkerFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	if f.queue != "" {
		return runQueueWorker(ctx, f, getenv, logger)
	}
	activities, err := activityARNs(f.prefix, getenv(backend.EnvStateMachineARN), f.steps)
	if err != nil {
		return err
	}
	reg, clients, err := openRegistry(ctx, getenv, logger, f.parallelism, f.pipelineDir)
	if err != nil {
		return err
	}
	if f.concurrency == 0 {
		// A poller holds a slot while it long-polls, so fewer slots than
		// activities would leave some activities unpolled for a while.
		f.concurrency = max(len(activities), 2*runtime.GOMAXPROCS(0))
	}
	w := &sfn.Worker{
		API: clients.SFN, Handler: reg, Activities: activities, Name: f.name, TaskOptions: f.taskOptions(logger),
	}
	logger.Info("worker started", "activities", len(activities), "concurrency", f.concurrency)
	return w.Run(ctx)
}

// runQueueWorker serves a queue-mode state machine's task queue.
func runQueueWorker(ctx context.Context, f workerFlags, getenv func(string) string, logger *slog.Logger) error {
	reg, clients, err := openRegistry(ctx, getenv, logger, f.parallelism, f.pipelineDir)
	if err != nil {
		return err
	}
	w := &sfn.QueueWorker{
		API: clients.SFN, Queue: sqs.NewFromConfig(clients.Config), QueueURL: f.queue, Handler: reg, TaskOptions: f.taskOptions(logger),
	}
	logger.Info("queue worker started", "queue", f.queue, "concurrency", f.concurrency)
	return w.Run(ctx)
}

func parseWorkerFlags(args []string, getenv func(string) string, stderr io.Writer) (workerFlags, error) {
	var f workerFlags
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host, _ := os.Hostname()
	fs.StringVar(&f.queue, "queue", getenv(backend.EnvTaskQueueURL), "URL of the SQS queue a queue-mode state machine sends tasks to; serves it instead of activities [$"+backend.EnvTaskQueueURL+"]")
	fs.StringVar(&f.prefix, "activity-prefix", getenv(backend.EnvActivityPrefix), "activity ARN prefix (or name prefix, completed from "+backend.EnvStateMachineARN+") [$"+backend.EnvActivityPrefix+"]")
	fs.StringVar(&f.steps, "steps", strings.Join(pipelinefile.Default().StepNames(), ","), "comma-separated steps to serve (activities only: a queue carries every step)")
	fs.IntVar(&f.concurrency, "concurrency", 0, "tasks run at once (plus, for activities, polls outstanding; 0: the number of activities served, at least 2 per core)")
	fs.IntVar(&f.parallelism, "parallelism", 0, "work inside one task at once (0: cores)")
	fs.DurationVar(&f.heartbeat, "heartbeat", sfn.DefaultHeartbeat, fmt.Sprintf("heartbeat interval; must beat at least twice within the definition's HeartbeatSeconds (%ds)", statemachine.TaskHeartbeatSeconds))
	fs.DurationVar(&f.grace, "shutdown-grace", sfn.DefaultShutdownGrace, "on SIGTERM, how long running tasks may finish")
	fs.StringVar(&f.pipelineDir, "pipeline-dir", getenv(backend.EnvPipelineDir), "folder holding one folder per pipeline name where its commands run, instead of the folder each version was applied from [$"+backend.EnvPipelineDir+"]")
	fs.StringVar(&f.name, "name", "docpipe-"+host, "worker name reported to Step Functions")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.queue != "" && f.prefix != "" {
		return f, errors.New("serve either a task queue (--queue) or activities (--activity-prefix), not both")
	}
	if f.concurrency < 0 {
		return f, errors.New("--concurrency must not be negative")
	}
	if err := sfn.CheckHeartbeat(f.heartbeat, statemachine.TaskHeartbeatSeconds*time.Second); err != nil {
		return f, fmt.Errorf("--heartbeat: %w", err)
	}
	return f, nil
}

// activityARNs returns the ARN of each step's activity.
func activityARNs(prefix, stateMachineARN, steps string) ([]string, error) {
	if prefix == "" {
		return nil, fmt.Errorf("no activity prefix (--activity-prefix or %s)", backend.EnvActivityPrefix)
	}
	if !strings.HasPrefix(prefix, "arn:") {
		if stateMachineARN == "" {
			return nil, fmt.Errorf("activity prefix %q is not an ARN prefix, and %s is not set to complete it", prefix, backend.EnvStateMachineARN)
		}
		p, err := sfn.ActivityARNPrefix(stateMachineARN, prefix)
		if err != nil {
			return nil, err
		}
		prefix = p
	}
	known := map[string]bool{}
	for _, s := range pipelinefile.Default().StepNames() {
		known[s] = true
	}
	var arns []string
	for s := range strings.SplitSeq(steps, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !known[s] {
			return nil, fmt.Errorf("unknown step %q", s)
		}
		arns = append(arns, prefix+s)
	}
	if len(arns) == 0 {
		return nil, errors.New("no steps to serve")
	}
	return arns, nil
}
