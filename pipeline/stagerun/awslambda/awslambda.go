// Package awslambda invokes users' Lambda stages through the AWS SDK: the
// stagerun.LambdaInvoker that talks to the real service.
package awslambda

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// notReady are Lambda faults that pass on their own: a function being
// created or updated, or its network interfaces still being set up.
var notReady = []string{
	"ResourceNotReadyException", "ResourceConflictException",
	"EC2ThrottledException", "ENILimitReachedException",
	"SnapStartNotReadyException",
}

// Invoker invokes functions synchronously with a Lambda client. The
// client's own retryer has already retried what it could when an error
// reaches the stage.
type Invoker struct {
	Client *lambda.Client
}

// Invoke runs the function and returns its payload and FunctionError.
// Throttling, service faults and network errors come back as
// *steperr.TransientError.
func (i Invoker) Invoke(ctx context.Context, arn string, payload []byte) ([]byte, string, error) {
	out, err := i.Client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(arn),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
	})
	if err != nil {
		return nil, "", classify(err)
	}
	return out.Payload, aws.ToString(out.FunctionError), nil
}

// classify marks the errors worth another attempt later as transient,
// with the SDK's own notion of retryable plus Lambda's not-ready faults.
func classify(err error) error {
	var api smithy.APIError
	retryable := retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
	if retryable || (errors.As(err, &api) && slices.Contains(notReady, api.ErrorCode())) {
		return &steperr.TransientError{Reason: err.Error()}
	}
	return fmt.Errorf("invoke: %w", err)
}
