// Package statemachine turns the pipeline definition into Amazon States
// Language. The same generated definition runs on AWS Step Functions and on
// the in-process interpreter (statemachine/interp); only the task resources
// differ, and they are chosen here, at generation time.
package statemachine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Mode chooses how tasks are invoked.
type Mode string

const (
	// ModeLocal invokes in-process handlers; the resource names the step.
	ModeLocal Mode = "local"
	// ModeLambda invokes one Lambda function (cmd/steps) that dispatches on
	// the payload's step name. ${steps_function_arn} is filled in at deploy.
	ModeLambda Mode = "lambda"
	// ModeActivity hands tasks to Step Functions activities served by
	// `steps worker`; ${activity_arn_prefix} is filled in at deploy.
	ModeActivity Mode = "activity"
	// ModeQueue sends each task, with its task token, to an SQS queue that
	// `steps worker --queue` serves (the callback pattern). It runs
	// unchanged on AWS, LocalStack and moto, whose engine cannot hand out
	// activity tasks. ${task_queue_url} is filled in at deploy.
	ModeQueue Mode = "queue"
)

// Modes lists every mode, in the order definitions are committed.
var Modes = []Mode{ModeLocal, ModeLambda, ModeActivity, ModeQueue}

// Template variables that deployments fill in (Terraform templatefile syntax).
const (
	VarStepsFunctionARN  = "steps_function_arn"
	VarActivityARNPrefix = "activity_arn_prefix"
	VarTaskQueueURL      = "task_queue_url"
)

// QueueTaskTokenField is the field of a queue-mode message body holding
// the task token the worker reports back with.
const QueueTaskTokenField = "task_token"

// TaskHeartbeatSeconds is how long a worker-served task (activity or
// queue) may go without a heartbeat before Step Functions retries it.
const TaskHeartbeatSeconds = 60

// State names the generator adds around the stages.
const (
	StateWorkflowFailed = pipeline.StepWorkflowFailed
	StateFinalize       = pipeline.StepFinalize
	StateFailed         = "Failed"
	StateAnalyzeBatch   = "analyze_batch"
)

// ErrorWorkflowFailed is the error a failed execution ends with.
const ErrorWorkflowFailed = "WorkflowFailed"

// LocalResource is the task resource of a step in ModeLocal.
func LocalResource(step string) string { return "docpipe:local:" + step }

// ActivityName is the activity serving a step, under a deployment prefix.
func ActivityName(prefix, step string) string { return prefix + step }

// lambdaServiceErrors are the Lambda service faults AWS recommends retrying.
var lambdaServiceErrors = []string{
	"Lambda.ServiceException",
	"Lambda.AWSLambdaException",
	"Lambda.SdkClientException",
	"Lambda.TooManyRequestsException",
	"Lambda.ClientExecutionTimeoutException",
}

// transientErrors are retried with the stage's backoff policy.
var transientErrors = []string{steperr.NameTransient, "States.Timeout", "States.HeartbeatTimeout"}

// obj is a JSON object; encoding/json sorts its keys, so output is stable.
type obj = map[string]any

// Generate returns the ASL definition of def for mode, indented JSON.
func Generate(def pipeline.Definition, mode Mode) ([]byte, error) {
	if len(def.Stages) == 0 {
		return nil, fmt.Errorf("statemachine: pipeline %q has no stages", def.Name)
	}
	switch mode {
	case ModeLocal, ModeLambda, ModeActivity, ModeQueue:
	default:
		return nil, fmt.Errorf("statemachine: unknown mode %q", mode)
	}
	g := generator{def: def, mode: mode}
	states := obj{}
	for i, st := range def.Stages {
		next := StateFinalize
		if i+1 < len(def.Stages) {
			next = def.Stages[i+1].Name
		}
		switch st.Scope {
		case pipeline.ScopeDocument:
			states[st.Name] = g.documentTask(st, next)
		case pipeline.ScopeSegmentBatch:
			states[st.Name] = g.batchMap(st, next)
		default:
			return nil, fmt.Errorf("statemachine: stage %q has unknown scope %q", st.Name, st.Scope)
		}
	}
	final := g.task(pipeline.StepFinalize, obj{"step": pipeline.StepFinalize, "workflow.$": "$.workflow"}, pipeline.DefaultRetry, true, 300)
	final["Catch"] = g.catchAll()
	final["End"] = true
	states[StateFinalize] = final

	failed := g.task(pipeline.StepWorkflowFailed, obj{"step": pipeline.StepWorkflowFailed, "workflow.$": "$.workflow", "error.$": "$.error"}, pipeline.DefaultRetry, true, 300)
	failed["Next"] = StateFailed
	states[StateWorkflowFailed] = failed
	states[StateFailed] = obj{
		"Type":  "Fail",
		"Error": ErrorWorkflowFailed,
		"Cause": "a step failed; the workflow's step item records which and why",
	}

	sm := obj{
		"Comment": fmt.Sprintf("%s pipeline, %s task mode. Generated from the pipeline definition by `make generate`; do not edit.", def.Name, mode),
		"StartAt": def.Stages[0].Name,
		"States":  states,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sm); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type generator struct {
	def  pipeline.Definition
	mode Mode
}

// documentTask is a stage run once per workflow.
func (g generator) documentTask(st pipeline.Stage, next string) obj {
	t := g.task(st.Name, obj{"step": st.Name, "workflow.$": "$.workflow"}, st.Retry, st.Retryable, st.TimeoutSeconds)
	t["Catch"] = g.catchAll()
	t["Next"] = next
	return t
}

// batchMap fans a segment_batch stage out over the manifest's batches with a
// Distributed Map. Only batch bounds travel; the handler reads segments from
// the table and blob store.
func (g generator) batchMap(st pipeline.Stage, next string) obj {
	inner := g.task(st.Name, obj{"step": st.Name, "workflow.$": "$.workflow", "batch.$": "$.batch"}, st.Retry, st.Retryable, st.TimeoutSeconds)
	inner["End"] = true
	// A child execution's output is gathered by the Map before its own
	// ResultPath drops it; an empty output keeps 30,000 pages far from the
	// payload limit.
	inner["OutputPath"] = nil
	return obj{
		"Type": "Map",
		"ItemReader": obj{
			"Resource":     "arn:aws:states:::s3:getObject",
			"ReaderConfig": obj{"InputType": "JSON"},
			"Parameters":   obj{"Bucket.$": "$.bucket", "Key.$": "$.manifest_key"},
		},
		"ItemSelector": obj{
			"workflow.$": "$.workflow",
			"batch.$":    "$$.Map.Item.Value",
		},
		"ItemProcessor": obj{
			"ProcessorConfig": obj{"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
			"StartAt":         StateAnalyzeBatch,
			"States":          obj{StateAnalyzeBatch: inner},
		},
		"MaxConcurrency": g.def.MaxConcurrency,
		"ResultPath":     nil,
		"Catch":          g.catchAll(),
		"Next":           next,
	}
}

// task builds a Task state invoking step with payload, in the generator's mode.
func (g generator) task(step string, payload obj, retry pipeline.RetryPolicy, retryable bool, timeout int) obj {
	t := obj{"Type": "Task", "ResultPath": nil}
	if timeout > 0 {
		t["TimeoutSeconds"] = timeout
	}
	var retriers []any
	switch g.mode {
	case ModeLocal:
		t["Resource"] = LocalResource(step)
		t["Parameters"] = payload
	case ModeLambda:
		t["Resource"] = "arn:aws:states:::lambda:invoke"
		t["Parameters"] = obj{"FunctionName": "${" + VarStepsFunctionARN + "}", "Payload": payload}
		retriers = append(retriers, obj{
			"ErrorEquals":     lambdaServiceErrors,
			"IntervalSeconds": 1, "MaxAttempts": 6, "BackoffRate": 2.0,
			"MaxDelaySeconds": 30, "JitterStrategy": "FULL",
		}, obj{
			// A function killed by its timeout or memory limit: worth one
			// more try, not six.
			"ErrorEquals":     []string{"Lambda.Unknown"},
			"IntervalSeconds": 2, "MaxAttempts": 1, "BackoffRate": 2.0,
			"JitterStrategy": "FULL",
		})
	case ModeActivity:
		t["Resource"] = "${" + VarActivityARNPrefix + "}" + step
		t["Parameters"] = payload
		t["HeartbeatSeconds"] = TaskHeartbeatSeconds
	case ModeQueue:
		body := obj{QueueTaskTokenField + ".$": "$$.Task.Token"}
		for k, v := range payload {
			body[k] = v
		}
		t["Resource"] = "arn:aws:states:::sqs:sendMessage.waitForTaskToken"
		t["Parameters"] = obj{"QueueUrl": "${" + VarTaskQueueURL + "}", "MessageBody": body}
		t["HeartbeatSeconds"] = TaskHeartbeatSeconds
	}
	if retryable && retry.MaxAttempts > 0 {
		r := obj{
			"ErrorEquals":     transientErrors,
			"IntervalSeconds": retry.IntervalSeconds,
			"MaxAttempts":     retry.MaxAttempts,
			"BackoffRate":     retry.BackoffRate,
			"JitterStrategy":  "FULL",
		}
		if retry.MaxDelaySeconds > 0 {
			r["MaxDelaySeconds"] = retry.MaxDelaySeconds
		}
		retriers = append(retriers, r)
	}
	if len(retriers) > 0 {
		t["Retry"] = retriers
	}
	return t
}

// catchAll routes any uncaught failure to the workflow_failed recorder,
// keeping the original input and putting {Error, Cause} under $.error.
func (g generator) catchAll() []any {
	return []any{obj{"ErrorEquals": []string{"States.ALL"}, "ResultPath": "$.error", "Next": StateWorkflowFailed}}
}

var templateVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Render fills ${name} placeholders the way Terraform's templatefile does,
// for deployments made from Go (tests, `docpipe` dev commands). Every
// placeholder must have a value.
func Render(definition []byte, vars map[string]string) ([]byte, error) {
	var missing []string
	out := templateVar.ReplaceAllFunc(definition, func(m []byte) []byte {
		name := string(templateVar.FindSubmatch(m)[1])
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		b, _ := json.Marshal(v)
		return b[1 : len(b)-1] // JSON-escaped, without quotes: placeholders sit inside strings
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("statemachine: no value for %s", strings.Join(missing, ", "))
	}
	return out, nil
}
