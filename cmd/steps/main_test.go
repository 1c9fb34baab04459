package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// TestLambdaPayloads round-trips every testdata payload through the
// Lambda handler: the step input decodes and re-encodes unchanged, and the
// handler registered for its step receives it.
func TestLambdaPayloads(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var in pipeline.StepInput
		if err := json.Unmarshal(raw, &in); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		again, _ := json.Marshal(in)
		if !bytes.Equal(again, bytes.TrimSpace(raw)) {
			t.Errorf("%s: round trip\n got %s\nwant %s", file, again, raw)
		}
		reg := pipeline.NewRegistry()
		reg.Register(in.Step, pipeline.HandlerFunc(func(_ context.Context, p []byte) ([]byte, error) {
			var got pipeline.StepInput
			if err := json.Unmarshal(p, &got); err != nil || !reflect.DeepEqual(got, in) {
				t.Errorf("%s: handler got %s", file, p)
			}
			return json.Marshal(pipeline.StepOutput{Step: got.Step})
		}))
		out, err := lambda.NewHandler(lambdaHandler(reg)).Invoke(t.Context(), raw)
		if err != nil || string(out) != `{"step":"`+in.Step+`"}` {
			t.Errorf("%s: %s, %v", file, out, err)
		}
	}
}

// TestLambdaErrorTypes: Lambda reports the error's Go type name as
// errorType, which must be the ASL error name Retry and Catch match.
func TestLambdaErrorTypes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&steperr.TransientError{Reason: "throttled"}, steperr.NameTransient},
		{errors.Join(errors.New("ctx"), &steperr.TooLargeError{Reason: "pages"}), steperr.NameTooLarge},
		{errors.New("boom"), steperr.NameUnexpected},
		{context.DeadlineExceeded, steperr.NameTransient},
	} {
		h := lambdaHandler(pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) { return nil, tc.err }))
		_, err := h(t.Context(), json.RawMessage(`{"step":"x"}`))
		typ := reflect.TypeOf(err)
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Name() != tc.want {
			t.Errorf("%v: errorType %s, want %s", tc.err, typ.Name(), tc.want)
		}
	}
}

func TestWorkerConfig(t *testing.T) {
	t.Parallel()
	arns, err := activityARNs("docpipe-", "arn:aws:states:eu-west-1:111122223333:stateMachine:docpipe", "segment_prep, finalize")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"arn:aws:states:eu-west-1:111122223333:activity:docpipe-segment_prep", "arn:aws:states:eu-west-1:111122223333:activity:docpipe-finalize"}
	if !reflect.DeepEqual(arns, want) {
		t.Errorf("arns %v", arns)
	}
	if _, err := activityARNs("docpipe-", "", "finalize"); err == nil {
		t.Error("name prefix without a state machine ARN accepted")
	}
	if _, err := activityARNs("arn:aws:states:eu-west-1:1:activity:p-", "", "nope"); err == nil || !strings.Contains(err.Error(), "unknown step") {
		t.Errorf("unknown step: %v", err)
	}
	all, err := activityARNs("arn:aws:states:eu-west-1:1:activity:p-", "", strings.Join(pipelinefile.Default().StepNames(), ","))
	if err != nil || len(all) != len(pipelinefile.Default().Stages)+2 {
		t.Errorf("all steps: %d, %v", len(all), err)
	}
	var buf bytes.Buffer
	if _, err := parseWorkerFlags([]string{"--heartbeat=90s"}, func(string) string { return "" }, &buf); err == nil {
		t.Error("heartbeat above HeartbeatSeconds accepted")
	}
	if _, err := parseWorkerFlags([]string{"--heartbeat=30s"}, func(string) string { return "" }, &buf); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("heartbeat that beats only once within HeartbeatSeconds: %v", err)
	}
	if _, err := parseWorkerFlags([]string{"--heartbeat=29s"}, func(string) string { return "" }, &buf); err != nil {
		t.Errorf("heartbeat beating twice within HeartbeatSeconds: %v", err)
	}
}

func TestQueueWorkerFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DOCPIPE_TASK_QUEUE_URL": "http://sqs/q"}
	getenv := func(k string) string { return env[k] }
	var buf bytes.Buffer
	f, err := parseWorkerFlags(nil, getenv, &buf)
	if err != nil || f.queue != "http://sqs/q" {
		t.Fatalf("queue from the environment: %q, %v", f.queue, err)
	}
	if f, err = parseWorkerFlags([]string{"--queue", "http://sqs/other"}, getenv, &buf); err != nil || f.queue != "http://sqs/other" {
		t.Fatalf("--queue: %q, %v", f.queue, err)
	}
	if _, err := parseWorkerFlags([]string{"--activity-prefix", "docpipe-"}, getenv, &buf); err == nil {
		t.Error("both a queue and activities accepted")
	}
}
