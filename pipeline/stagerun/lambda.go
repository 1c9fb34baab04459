package stagerun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// LambdaInvoker invokes a Lambda function synchronously. It returns the
// response payload and, when the function itself failed, Lambda's
// FunctionError ("Unhandled" or "Handled") alongside the error payload.
// err is for invocations that did not run the function: it is a
// *steperr.TransientError when a retry may succeed (throttling, a service
// fault, a network error), anything else is permanent.
type LambdaInvoker interface {
	Invoke(ctx context.Context, arn string, payload []byte) (out []byte, functionError string, err error)
}

// lambdaTimeout is the errorType Lambda reports for a function that ran
// past its own timeout; like a command's timeout, it is transient.
const lambdaTimeout = "Sandbox.Timedout"

// Lambda runs a stage as a Lambda function: the request as the payload,
// the output as the response payload.
type Lambda struct {
	ARN     string
	Timeout time.Duration
	Invoker LambdaInvoker
	// MaxRequest bounds the payload, inline inputs included.
	MaxRequest int
}

// NewLambda returns a runner invoking the function arn through inv,
// bounded by timeout (zero: only the function's own timeout).
func NewLambda(arn string, timeout time.Duration, inv LambdaInvoker) *Lambda {
	return &Lambda{ARN: arn, Timeout: timeout, Invoker: inv, MaxRequest: DefaultMaxInline}
}

// Run invokes the function. A function error is permanent unless its
// errorType names a transient error (TransientError, or Lambda's own
// timeout); its reason is the errorType and errorMessage.
func (l *Lambda) Run(ctx context.Context, req Request) (Result, error) {
	payload, err := remotePayload(req, l.MaxRequest)
	if err != nil {
		return Result{}, err
	}
	runCtx, cancel := withTimeout(ctx, l.Timeout)
	defer cancel()
	out, fnErr, err := l.Invoker.Invoke(runCtx, l.ARN, payload)
	switch {
	case context.Cause(runCtx) == errStageTimeout:
		return Result{}, timedOut(req.Stage, l.Timeout)
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("%s: %w", req.Stage, context.Cause(ctx))
	case err != nil:
		var transient *steperr.TransientError
		if errors.As(err, &transient) {
			return Result{}, &steperr.TransientError{Reason: fmt.Sprintf("%s: %s", req.Stage, transient.Reason)}
		}
		return Result{}, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: %v", req.Stage, err)}
	case fnErr != "":
		return Result{}, functionError(req.Stage, fnErr, out)
	}
	return parseOutput(req.Stage, req.Scope, out)
}

// functionError classifies a function that ran and failed, from the
// error payload Lambda returns: {"errorType": ..., "errorMessage": ...}.
func functionError(stage, fnErr string, payload []byte) error {
	var e struct {
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}
	reason := fmt.Sprintf("%s: %s", stage, fnErr)
	if json.Unmarshal(payload, &e) == nil && (e.ErrorType != "" || e.ErrorMessage != "") {
		reason = fmt.Sprintf("%s: %s: %s", stage, e.ErrorType, tailOf([]byte(e.ErrorMessage)))
	} else if tail := tailOf(payload); tail != "" {
		reason += ": " + tail
	}
	if e.ErrorType == steperr.NameTransient || e.ErrorType == lambdaTimeout {
		return &steperr.TransientError{Reason: reason}
	}
	return &steperr.StageFailedError{Reason: reason}
}
