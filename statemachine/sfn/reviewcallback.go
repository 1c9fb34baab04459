package sfn

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
)

// ReviewCallback answers the Step Functions task a review holds the token
// of, once a person decided it.
type ReviewCallback struct {
	API interface {
		SendTaskSuccess(ctx context.Context, in *awssfn.SendTaskSuccessInput, optFns ...func(*awssfn.Options)) (*awssfn.SendTaskSuccessOutput, error)
		SendTaskFailure(ctx context.Context, in *awssfn.SendTaskFailureInput, optFns ...func(*awssfn.Options)) (*awssfn.SendTaskFailureOutput, error)
	}
}

// Succeed reports the review task done with output.
func (c ReviewCallback) Succeed(ctx context.Context, token string, output []byte) error {
	_, err := c.API.SendTaskSuccess(ctx, &awssfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(string(output))})
	return err
}

// Fail reports the review task failed under errorName, which the state
// machine's Catch routes to workflow_failed.
func (c ReviewCallback) Fail(ctx context.Context, token string, errorName, cause string) error {
	_, err := c.API.SendTaskFailure(ctx, &awssfn.SendTaskFailureInput{
		TaskToken: aws.String(token), Error: aws.String(truncate(errorName, maxErrorLen)), Cause: aws.String(truncate(cause, maxCauseLen)),
	})
	return err
}
