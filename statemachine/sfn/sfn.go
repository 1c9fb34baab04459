// Package sfn runs docpipe's state machine on AWS Step Functions: it
// deploys definitions and activities (development and tests; production
// deploys with Terraform), starts executions named after workflows,
// reconciles executions that ended outside the state machine's own Catch,
// and serves tasks with step handlers: activity tasks (Worker) or the task
// messages of a queue-mode state machine (QueueWorker).
package sfn

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// DeployAPI is the part of the Step Functions API that deployments use.
// *sfn.Client implements it.
type DeployAPI interface {
	CreateStateMachine(ctx context.Context, in *awssfn.CreateStateMachineInput, optFns ...func(*awssfn.Options)) (*awssfn.CreateStateMachineOutput, error)
	UpdateStateMachine(ctx context.Context, in *awssfn.UpdateStateMachineInput, optFns ...func(*awssfn.Options)) (*awssfn.UpdateStateMachineOutput, error)
	ListStateMachines(ctx context.Context, in *awssfn.ListStateMachinesInput, optFns ...func(*awssfn.Options)) (*awssfn.ListStateMachinesOutput, error)
	CreateActivity(ctx context.Context, in *awssfn.CreateActivityInput, optFns ...func(*awssfn.Options)) (*awssfn.CreateActivityOutput, error)
}

// Client deploys state machines and activities.
type Client struct {
	api DeployAPI
}

// New returns a Client over api (normally a *sfn.Client).
func New(api DeployAPI) *Client { return &Client{api: api} }

// DeployStateMachine creates the state machine, or updates the definition
// and role of the one with that name, and returns its ARN.
func (c *Client) DeployStateMachine(ctx context.Context, name, roleARN string, definition []byte) (string, error) {
	out, err := c.api.CreateStateMachine(ctx, &awssfn.CreateStateMachineInput{
		Name: aws.String(name), RoleArn: aws.String(roleARN), Definition: aws.String(string(definition)),
		Type: types.StateMachineTypeStandard,
	})
	if err == nil {
		return aws.ToString(out.StateMachineArn), nil
	}
	var exists *types.StateMachineAlreadyExists
	if !errors.As(err, &exists) {
		return "", fmt.Errorf("sfn: create state machine %s: %w", name, err)
	}
	smARN, err := c.findStateMachine(ctx, name)
	if err != nil {
		return "", err
	}
	if _, err := c.api.UpdateStateMachine(ctx, &awssfn.UpdateStateMachineInput{
		StateMachineArn: aws.String(smARN), RoleArn: aws.String(roleARN), Definition: aws.String(string(definition)),
	}); err != nil {
		return "", fmt.Errorf("sfn: update state machine %s: %w", name, err)
	}
	return smARN, nil
}

func (c *Client) findStateMachine(ctx context.Context, name string) (string, error) {
	p := awssfn.NewListStateMachinesPaginator(c.api, &awssfn.ListStateMachinesInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("sfn: list state machines: %w", err)
		}
		for _, sm := range page.StateMachines {
			if aws.ToString(sm.Name) == name {
				return aws.ToString(sm.StateMachineArn), nil
			}
		}
	}
	return "", fmt.Errorf("sfn: state machine %s exists but is not listed", name)
}

// EnsureActivities creates the activity of every step (name prefix+step;
// CreateActivity is idempotent) and returns step → activity ARN.
func (c *Client) EnsureActivities(ctx context.Context, prefix string, steps []string) (map[string]string, error) {
	arns := make(map[string]string, len(steps))
	for _, step := range steps {
		name := prefix + step
		if !validName(name) {
			return nil, fmt.Errorf("sfn: %q is not a valid activity name", name)
		}
		out, err := c.api.CreateActivity(ctx, &awssfn.CreateActivityInput{Name: aws.String(name)})
		if err != nil {
			return nil, fmt.Errorf("sfn: create activity %s: %w", name, err)
		}
		arns[step] = aws.ToString(out.ActivityArn)
	}
	return arns, nil
}

// ActivityARNPrefix returns the ARN prefix of activities named
// namePrefix+step in the partition, region and account of anyARN (a state
// machine's or an activity's ARN): the value of the definition's
// ${activity_arn_prefix}.
func ActivityARNPrefix(anyARN, namePrefix string) (string, error) {
	a, err := arn.Parse(anyARN)
	if err != nil {
		return "", fmt.Errorf("sfn: %w", err)
	}
	return fmt.Sprintf("arn:%s:states:%s:%s:activity:%s", a.Partition, a.Region, a.AccountID, namePrefix), nil
}

// namePattern is what Step Functions accepts in execution and activity
// names that must also work with CloudWatch Logs (ASCII subset). It is
// compiled on first use: its bounded repeat makes a large program that
// every docpipe command would otherwise build at start-up.
var namePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9A-Za-z_-]{1,80}$`)
})

func validName(s string) bool { return namePattern().MatchString(s) }

// ExecutionName is the execution name of a workflow: its id, so that a
// second start of the same workflow cannot start a second execution.
func ExecutionName(workflowID string) (string, error) {
	if !validName(workflowID) {
		return "", fmt.Errorf("sfn: workflow id %q cannot name an execution", workflowID)
	}
	return workflowID, nil
}

// rerunInfix separates a workflow id from the attempt in a re-run's
// execution name.
const rerunInfix = "-rerun-"

// RerunExecutionName is the execution name of re-run number attempt (from
// 1) of a workflow: <workflow>-rerun-<attempt>.
func RerunExecutionName(workflowID string, attempt int) (string, error) {
	if attempt < 1 {
		return "", fmt.Errorf("sfn: re-run attempt %d of %s: attempts count from 1", attempt, workflowID)
	}
	name := fmt.Sprintf("%s%s%d", workflowID, rerunInfix, attempt)
	if !validName(name) {
		return "", fmt.Errorf("sfn: workflow id %q cannot name a re-run execution", workflowID)
	}
	return name, nil
}

// WorkflowOfExecution returns the workflow id an execution name stands
// for: the name itself, or the workflow of a re-run.
func WorkflowOfExecution(name string) string {
	if i := strings.LastIndex(name, rerunInfix); i > 0 {
		if _, err := strconv.Atoi(name[i+len(rerunInfix):]); err == nil {
			return name[:i]
		}
	}
	return name
}

// ExecutionARN returns the ARN of the execution named name of a state
// machine, as Step Functions forms it.
func ExecutionARN(stateMachineARN, name string) (string, error) {
	a, err := arn.Parse(stateMachineARN)
	if err != nil {
		return "", fmt.Errorf("sfn: %w", err)
	}
	smName, ok := strings.CutPrefix(a.Resource, "stateMachine:")
	if !ok || smName == "" || strings.Contains(smName, ":") {
		return "", fmt.Errorf("sfn: %s is not a state machine ARN", stateMachineARN)
	}
	a.Resource = "execution:" + smName + ":" + name
	return a.String(), nil
}

// NextRerunAttempt returns the attempt number of the next re-run after the
// execution recorded for a workflow: 1 after the first execution, n+1
// after re-run n.
func NextRerunAttempt(executionARN string) int {
	name := executionARN[strings.LastIndex(executionARN, ":")+1:]
	if i := strings.LastIndex(name, rerunInfix); i > 0 {
		if n, err := strconv.Atoi(name[i+len(rerunInfix):]); err == nil && n > 0 {
			return n + 1
		}
	}
	return 1
}
