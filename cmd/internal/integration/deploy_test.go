//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/logging"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/pipelinedeploy"
	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/awscount"
	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// roleARN is any syntactically valid role: emulators do not assume it.
const roleARN = "arn:aws:iam::123456789012:role/docpipe-test"

// project is the project every suite document joins.
const project = "it"

// executionDeadline bounds one execution on the emulator.
const executionDeadline = 4 * time.Minute

// deployOptions vary a deployment.
type deployOptions struct {
	// wrapBlobs wraps the worker's blob store (to make segments fail).
	wrapBlobs func(blob.Store) blob.Store
	// wrapHandler wraps the worker's step handlers (to hold a step).
	wrapHandler func(pipeline.Handler) pipeline.Handler
	// counter counts the worker's AWS requests.
	counter *awscount.Counter
}

// deployment is one isolated docpipe on the endpoint: its own table,
// bucket, task queue and queue-mode state machine, served by an in-process
// queue worker.
type deployment struct {
	Table, Bucket, QueueURL, StateMachineARN string

	// B is the test's own view of the table and bucket (not counted, not
	// wrapped).
	B        *backend.Backend
	S3       *s3.Client
	SFN      *awssfn.Client
	Executor *sfn.Executor
	Ingest   s3ingest.Ingest
}

func deploy(t *testing.T, o deployOptions) *deployment {
	t.Helper()
	ctx := t.Context()
	cfg := awstest.Config(t)
	cfg.Logger = logging.Nop{} // the S3 client notes every object without a checksum
	clients := backend.NewAWSClients(cfg)
	d := &deployment{S3: clients.S3, SFN: clients.SFN}
	d.Table = awstest.Table(t, clients.DynamoDB)
	d.Bucket = awstest.Bucket(t, clients.S3)

	// SQS gets its own connections: awstest sends one request at a time,
	// and a 20-second long poll would stall every other call of the test.
	qcfg := cfg.Copy()
	qcfg.HTTPClient = awshttp.NewBuildableClient()
	queue := sqs.NewFromConfig(qcfg)
	name := awstest.UniqueName("docpipe-it")
	q, err := queue.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	d.QueueURL = aws.ToString(q.QueueUrl)
	t.Cleanup(func() {
		if _, err := queue.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}); err != nil {
			t.Errorf("delete queue: %v", err)
		}
	})

	tmpl, err := statemachine.Definition(statemachine.ModeQueue)
	if err != nil {
		t.Fatal(err)
	}
	def, err := statemachine.Render(tmpl, map[string]string{statemachine.VarTaskQueueURL: d.QueueURL})
	if err != nil {
		t.Fatal(err)
	}
	if d.StateMachineARN, err = sfn.New(clients.SFN).DeployStateMachine(ctx, name, roleARN, def); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := clients.SFN.DeleteStateMachine(context.Background(), &awssfn.DeleteStateMachineInput{StateMachineArn: aws.String(d.StateMachineARN)}); err != nil {
			t.Errorf("delete state machine: %v", err)
		}
	})

	if d.B, err = backend.OpenAWSWith(clients, backend.AWSOptions{Table: d.Table, Bucket: d.Bucket}); err != nil {
		t.Fatal(err)
	}
	d.Executor = &sfn.Executor{API: clients.SFN, StateMachineARN: d.StateMachineARN, Repo: d.B.Repo}
	d.Ingest = s3ingest.Ingest{
		Ingester: &pipeline.Ingester{Repo: d.B.Repo, Blobs: d.B.Blobs, Definition: pipelinefile.Default(), Bucket: d.Bucket},
		Executor: d.Executor, Project: project,
	}
	startWorker(t, d, cfg, qcfg, o)
	return d
}

// deployPipeline applies def and deploys its version's state machine,
// deleted when the test ends.
func (d *deployment) deployPipeline(t *testing.T, def pipeline.Definition) (version int, arn string) {
	t.Helper()
	ctx := t.Context()
	version, _, err := d.B.Repo.ApplyPipeline(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	arn, err = pipelinedeploy.Deploy(ctx, d.SFN, d.B.Repo, d.StateMachineARN, def, version)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := d.SFN.DeleteStateMachine(context.Background(), &awssfn.DeleteStateMachineInput{StateMachineArn: aws.String(arn)}); err != nil {
			t.Errorf("delete state machine: %v", err)
		}
	})
	return version, arn
}

// startWorker runs a queue worker over its own clients until the test ends.
func startWorker(t *testing.T, d *deployment, cfg, qcfg aws.Config, o deployOptions) {
	t.Helper()
	wcfg := cfg.Copy()
	if o.counter != nil {
		wcfg.APIOptions = append(wcfg.APIOptions, o.counter.AddTo)
	}
	wclients := backend.NewAWSClients(wcfg)
	wb, err := backend.OpenAWSWith(wclients, backend.AWSOptions{Table: d.Table, Bucket: d.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	if o.wrapBlobs != nil {
		wb.Blobs = o.wrapBlobs(wb.Blobs)
	}
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg, err := backend.Registry(wb, backend.StepOptions{PDFBackend: "go", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	var h pipeline.Handler = reg
	if o.wrapHandler != nil {
		h = o.wrapHandler(h)
	}
	qcfg = qcfg.Copy()
	if o.counter != nil {
		qcfg.APIOptions = append(qcfg.APIOptions, o.counter.AddTo)
	}
	w := &sfn.QueueWorker{
		API: wclients.SFN, Queue: sqs.NewFromConfig(qcfg), QueueURL: d.QueueURL, Handler: h,
		TaskOptions: sfn.TaskOptions{Concurrency: 8, Heartbeat: 10 * time.Second, ShutdownGrace: time.Second, Logger: logger},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

// testWriter sends worker logs to the test's log, while it runs.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// upload puts a file under incoming/ and ingests it the way cmd/ingest
// does: HeadObject, then register and start.
func (d *deployment) upload(t *testing.T, file string) s3ingest.Result {
	t.Helper()
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return d.uploadBytes(t, path.Base(file), body)
}

func (d *deployment) uploadBytes(t *testing.T, name string, body []byte) s3ingest.Result {
	t.Helper()
	return d.uploadWith(t, d.Ingest, backend.DefaultIncomingPrefix+name, body)
}

// uploadWith puts body under key and ingests it with in: the deployment's
// own ingest, or one for a pipeline version's state machine.
func (d *deployment) uploadWith(t *testing.T, in s3ingest.Ingest, key string, body []byte) s3ingest.Result {
	t.Helper()
	if _, err := d.S3.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(d.Bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		t.Fatalf("upload %s: %v", key, err)
	}
	return d.ingestWith(t, in, key)
}

func (d *deployment) ingest(t *testing.T, key string) s3ingest.Result {
	t.Helper()
	return d.ingestWith(t, d.Ingest, key)
}

func (d *deployment) ingestWith(t *testing.T, in s3ingest.Ingest, key string) s3ingest.Result {
	t.Helper()
	o, err := s3ingest.Head(t.Context(), d.S3, s3ingest.Object{Bucket: d.Bucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	res, err := in.Run(t.Context(), o)
	if err != nil {
		t.Fatalf("ingest %s: %v", key, err)
	}
	return res
}

// wait polls an execution until it ends and returns how it ended.
func (d *deployment) wait(t *testing.T, execARN string) sfn.Execution {
	t.Helper()
	deadline := time.Now().Add(executionDeadline)
	for {
		ex, err := d.Executor.Describe(t.Context(), execARN)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Status != sfntypes.ExecutionStatusRunning && ex.Status != sfntypes.ExecutionStatusPendingRedrive {
			return ex
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s still %s after %v", execARN, ex.Status, executionDeadline)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// holdStep makes the worker's handler of one step wait until released,
// so a test can look at a workflow while its execution runs.
type holdStep struct {
	pipeline.Handler
	step    string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newHoldStep(step string) *holdStep {
	return &holdStep{step: step, entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdStep) wrap(next pipeline.Handler) pipeline.Handler {
	h.Handler = next
	return h
}

func (h *holdStep) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var in pipeline.StepInput
	if json.Unmarshal(payload, &in) == nil && in.Step == h.step {
		h.once.Do(func() { close(h.entered) })
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Handler.Invoke(ctx, payload)
}

// hidingStore makes keys with a suffix look missing, to make segments fail.
type hidingStore struct {
	blob.Store
	mu     sync.Mutex
	suffix string
}

func (h *hidingStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	h.mu.Lock()
	hide := h.suffix != "" && strings.HasSuffix(key, h.suffix)
	h.mu.Unlock()
	if hide {
		return nil, blob.ErrNotFound
	}
	return h.Store.Get(ctx, key)
}

func (h *hidingStore) show() {
	h.mu.Lock()
	h.suffix = ""
	h.mu.Unlock()
}

// docpipeCommand runs bin, a built docpipe, against the endpoint the tests
// use: with this process's environment, and a region when none is set.
func docpipeCommand(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = os.Environ()
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		cmd.Env = append(cmd.Env, "AWS_REGION=us-east-1")
	}
	return cmd
}
