package sfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/docpipe/docpipe/pipeline"
)

// ExecutionAPI is the part of the Step Functions API that starting and
// watching executions uses. *sfn.Client implements it.
type ExecutionAPI interface {
	StartExecution(ctx context.Context, in *awssfn.StartExecutionInput, optFns ...func(*awssfn.Options)) (*awssfn.StartExecutionOutput, error)
	DescribeExecution(ctx context.Context, in *awssfn.DescribeExecutionInput, optFns ...func(*awssfn.Options)) (*awssfn.DescribeExecutionOutput, error)
	StopExecution(ctx context.Context, in *awssfn.StopExecutionInput, optFns ...func(*awssfn.Options)) (*awssfn.StopExecutionOutput, error)
}

// Executor starts workflows on a Step Functions state machine. It
// implements pipeline.Executor.
type Executor struct {
	API             ExecutionAPI
	StateMachineARN string
	// Repo, when set, records the execution ARN on the workflow.
	Repo *pipeline.Repository
}

var _ pipeline.Executor = (*Executor)(nil)

// Start starts the execution named after the workflow and returns its ARN.
// Starting a workflow that already has an execution starts nothing and
// returns that execution's ARN.
func (e *Executor) Start(ctx context.Context, input pipeline.ExecutionInput) (string, error) {
	name, err := ExecutionName(input.Workflow.WorkflowID)
	if err != nil {
		return "", err
	}
	return e.start(ctx, input, name)
}

// StartRerun starts re-run number attempt (from 1) of a workflow that
// PrepareRerun readied, in an execution named RerunExecutionName: names
// are unique per state machine, so the workflow's own name is taken. Like
// Start, starting the same attempt twice starts one execution.
func (e *Executor) StartRerun(ctx context.Context, input pipeline.ExecutionInput, attempt int) (string, error) {
	name, err := RerunExecutionName(input.Workflow.WorkflowID, attempt)
	if err != nil {
		return "", err
	}
	return e.start(ctx, input, name)
}

func (e *Executor) start(ctx context.Context, input pipeline.ExecutionInput, name string) (string, error) {
	body, err := json.Marshal(input)
	if err != nil {
		return "", fmt.Errorf("sfn: encode execution input: %w", err)
	}
	var execARN string
	out, err := e.API.StartExecution(ctx, &awssfn.StartExecutionInput{
		StateMachineArn: aws.String(e.StateMachineARN), Name: aws.String(name), Input: aws.String(string(body)),
	})
	var exists *types.ExecutionAlreadyExists
	switch {
	case err == nil:
		execARN = aws.ToString(out.ExecutionArn)
	case errors.As(err, &exists):
		// Same name, and the execution finished or had another input: it
		// is this workflow's execution all the same.
		if execARN, err = ExecutionARN(e.StateMachineARN, name); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("sfn: start execution of %s: %w", name, err)
	}
	if e.Repo != nil {
		if err := e.Repo.UpdateWorkflowInfo(ctx, input.Workflow, pipeline.WorkflowInfo{ExecutionID: &execARN}); err != nil {
			return execARN, fmt.Errorf("sfn: record execution of %s: %w", name, err)
		}
	}
	return execARN, nil
}

// Execution is what Describe reports of an execution.
type Execution struct {
	ARN    string
	Name   string
	Status types.ExecutionStatus
	Input  string
	Error  string
	Cause  string
	Start  time.Time
	Stop   time.Time
}

// ErrNoExecution means no execution has the ARN asked about.
var ErrNoExecution = errors.New("sfn: no such execution")

// Describe returns an execution's status; ErrNoExecution when there is none.
func (e *Executor) Describe(ctx context.Context, executionARN string) (Execution, error) {
	return describe(ctx, e.API, executionARN)
}

func describe(ctx context.Context, api ExecutionAPI, executionARN string) (Execution, error) {
	out, err := api.DescribeExecution(ctx, &awssfn.DescribeExecutionInput{ExecutionArn: aws.String(executionARN)})
	var missing *types.ExecutionDoesNotExist
	if errors.As(err, &missing) {
		return Execution{}, fmt.Errorf("%w: %s", ErrNoExecution, executionARN)
	}
	if err != nil {
		return Execution{}, fmt.Errorf("sfn: describe %s: %w", executionARN, err)
	}
	return Execution{
		ARN: aws.ToString(out.ExecutionArn), Name: aws.ToString(out.Name), Status: out.Status,
		Input: aws.ToString(out.Input), Error: aws.ToString(out.Error), Cause: aws.ToString(out.Cause),
		Start: aws.ToTime(out.StartDate), Stop: aws.ToTime(out.StopDate),
	}, nil
}

// Stop aborts an execution. The reconciler (or EventBridge rule) then
// marks its workflow failed.
func (e *Executor) Stop(ctx context.Context, executionARN, errName, cause string) error {
	_, err := e.API.StopExecution(ctx, &awssfn.StopExecutionInput{
		ExecutionArn: aws.String(executionARN), Error: aws.String(truncate(errName, maxErrorLen)), Cause: aws.String(truncate(cause, maxCauseLen)),
	})
	if err != nil {
		return fmt.Errorf("sfn: stop %s: %w", executionARN, err)
	}
	return nil
}
