package stagerun

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// invokerFunc adapts a function to LambdaInvoker.
type invokerFunc func(ctx context.Context, arn string, payload []byte) ([]byte, string, error)

func (f invokerFunc) Invoke(ctx context.Context, arn string, payload []byte) ([]byte, string, error) {
	return f(ctx, arn, payload)
}

func answer(out, fnErr string, err error) LambdaInvoker {
	return invokerFunc(func(context.Context, string, []byte) ([]byte, string, error) { return []byte(out), fnErr, err })
}

func TestLambdaStage(t *testing.T) {
	t.Parallel()
	const arn = "arn:aws:lambda:eu-west-1:123456789012:function:shout"
	var sent []byte
	inv := invokerFunc(func(_ context.Context, gotARN string, payload []byte) ([]byte, string, error) {
		if gotARN != arn {
			t.Errorf("invoked %s", gotARN)
		}
		sent = payload
		return []byte(`{"text": "HI"}`), "", nil
	})
	res, err := NewLambda(arn, time.Minute, inv).Run(t.Context(), segmentRequest(t, "hi"))
	if err != nil || res.Text == nil || *res.Text != "HI" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	want, _ := remotePayload(segmentRequest(t, "hi"), DefaultMaxInline)
	if len(sent) != len(want) {
		t.Errorf("payload %s, want the remote form %s", sent, want)
	}
}

func TestLambdaFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		inv    LambdaInvoker
		want   string
		reason string
	}{
		{"function raised", answer(`{"errorType": "ValueError", "errorMessage": "bad input"}`, "Unhandled", nil),
			steperr.NameStageFailed, "shout: ValueError: bad input"},
		{"function asked for a retry", answer(`{"errorType": "TransientError", "errorMessage": "busy"}`, "Handled", nil),
			steperr.NameTransient, "shout: TransientError: busy"},
		{"function timed out", answer(`{"errorType": "Sandbox.Timedout", "errorMessage": "Task timed out after 3.00 seconds"}`, "Unhandled", nil),
			steperr.NameTransient, "shout: Sandbox.Timedout: Task timed out"},
		{"function error without a body", answer("", "Unhandled", nil), steperr.NameStageFailed, "shout: Unhandled"},
		{"throttled", answer("", "", &steperr.TransientError{Reason: "TooManyRequestsException: rate exceeded"}),
			steperr.NameTransient, "shout: TooManyRequestsException: rate exceeded"},
		{"no such function", answer("", "", errors.New("ResourceNotFoundException: no function")),
			steperr.NameStageFailed, "shout: ResourceNotFoundException"},
		{"not JSON", answer("hello", "", nil), steperr.NameStageFailed, "shout: stage output is not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewLambda("arn", time.Minute, tc.inv).Run(t.Context(), segmentRequest(t, "x"))
			wantErr(t, err, tc.want, tc.reason)
		})
	}
}

func TestLambdaTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	blocks := invokerFunc(func(ctx context.Context, _ string, _ []byte) ([]byte, string, error) {
		<-ctx.Done()
		return nil, "", ctx.Err()
	})
	_, err := NewLambda("arn", 100*time.Millisecond, blocks).Run(t.Context(), segmentRequest(t, "x"))
	wantErr(t, err, steperr.NameTransient, "shout: timed out after 0.1s")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = NewLambda("arn", time.Minute, blocks).Run(ctx, segmentRequest(t, "x"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
