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
	"slices"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/statemachine/asl"
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
	// StateSegmentBatches is the Distributed Map that runs the segment
	// stages once per manifest batch. Like the other generated names it
	// holds a space, which stage names cannot, so none can collide.
	StateSegmentBatches = "segment batches"
	// StateWaitingReview ends an execution whose review is undecided.
	StateWaitingReview = "waiting for review"
)

// ErrorWorkflowFailed is the error a failed execution ends with.
const ErrorWorkflowFailed = "WorkflowFailed"

// LocalResource is the task resource of a handler in ModeLocal: a stage's
// builtin or generic handler (pipeline.HandlerFor), or a bookkeeping step.
func LocalResource(step string) string { return "docpipe:local:" + step }

// lambdaServiceErrors are the Lambda service faults AWS recommends retrying.
var lambdaServiceErrors = []string{
	"Lambda.ServiceException",
	"Lambda.AWSLambdaException",
	"Lambda.SdkClientException",
	"Lambda.TooManyRequestsException",
	"Lambda.ClientExecutionTimeoutException",
}

// lambdaUnknownError is a function killed by its timeout or memory limit.
const lambdaUnknownError = "Lambda.Unknown"

// transientErrors are retried with the stage's backoff policy.
var transientErrors = []string{steperr.NameTransient, asl.ErrorTimeout, asl.ErrorHeartbeatTimeout}

// bookkeepingTimeoutSeconds bounds the finalize and workflow_failed tasks.
const bookkeepingTimeoutSeconds = 300

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
	body, err := g.stages()
	if err != nil {
		return nil, err
	}
	sm := &asl.StateMachine{
		Comment: fmt.Sprintf("%s pipeline, %s task mode. Generated from the pipeline definition by `make generate`; do not edit.", def.Name, mode),
		StartAt: body[0].start,
	}
	chain(&sm.States, StateFinalize, body...)

	final := g.task(pipeline.StepFinalize, stepPayload(pipeline.StepFinalize), pipeline.DefaultRetry, true, bookkeepingTimeoutSeconds)
	final.Catch = g.catchAll()
	sequence(&sm.States, "", namedState{StateFinalize, final})

	failed := g.task(pipeline.StepWorkflowFailed, stepPayload(pipeline.StepWorkflowFailed, asl.DynamicField("error", "$.error")),
		pipeline.DefaultRetry, true, bookkeepingTimeoutSeconds)
	sequence(&sm.States, StateFailed, namedState{StateWorkflowFailed, failed})
	if g.hasReview() {
		sm.States.Add(StateWaitingReview, &asl.Fail{
			Error: steperr.NameReviewPending,
			Cause: "a review waits for a person; the workflow resumes once it is decided",
		})
	}
	sm.States.Add(StateFailed, &asl.Fail{
		Error: ErrorWorkflowFailed,
		Cause: "a step failed; the workflow's step item records which and why",
	})

	if err := asl.Validate(sm); err != nil {
		return nil, fmt.Errorf("statemachine: generated definition of %q is invalid: %w", def.Name, err)
	}
	return encodeSorted(sm)
}

// encodeSorted writes sm as indented JSON with every object's keys sorted,
// the stable, diff-friendly layout of the committed definitions.
func encodeSorted(sm *asl.StateMachine) ([]byte, error) {
	b, err := json.Marshal(sm)
	if err != nil {
		return nil, err
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tree); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type generator struct {
	def  pipeline.Definition
	mode Mode
}

// namedState is a state and the name it is added under.
type namedState struct {
	name  string
	state asl.State
}

// sequence adds states in order, each continuing to the following one and
// the last to next; an empty next makes the last state end its machine.
func sequence(states *asl.States, next string, steps ...namedState) {
	for i, s := range steps {
		to := next
		if i+1 < len(steps) {
			to = steps[i+1].name
		}
		link(s.state, to)
		states.Add(s.name, s.state)
	}
}

// link makes st continue at next, or end its machine when next is empty.
func link(st asl.State, next string) {
	var f *asl.Flow
	switch s := st.(type) {
	case *asl.Task:
		f = &s.Flow
	case *asl.Map:
		f = &s.Flow
	case *asl.Parallel:
		f = &s.Flow
	case *asl.Pass:
		f = &s.Flow
	case *asl.Wait:
		f = &s.Flow
	default:
		panic(fmt.Sprintf("statemachine: a %s state has no Next", st.StateType()))
	}
	*f = asl.Flow{Next: next, End: next == ""}
}

// stepPayload is the task input every handler receives: its step name and
// the workflow, plus any extra fields.
func stepPayload(step string, extra ...asl.TemplateField) *asl.Template {
	fields := []asl.TemplateField{asl.Field("step", step), asl.DynamicField("workflow", "$.workflow")}
	return asl.Object(append(fields, extra...)...)
}

// distributedMap runs the blocks, in sequence, once per batch of the
// segment manifest, each batch a child execution.
func (g generator) distributedMap(blocks ...block) *asl.Map {
	selector := []asl.TemplateField{asl.DynamicField("workflow", "$.workflow"), asl.DynamicField("batch", "$$.Map.Item.Value")}
	if g.usesDocAttrs() {
		selector = append(selector, asl.DynamicField(docAttrsField, "$."+docAttrsField))
	}
	m := &asl.Map{
		ItemReader: &asl.ItemReader{
			Resource:     asl.ResourceS3GetObject,
			ReaderConfig: &asl.ReaderConfig{InputType: asl.ReaderInputTypeJSON},
			Parameters:   asl.Object(asl.DynamicField("Bucket", "$.bucket"), asl.DynamicField("Key", "$.manifest_key")),
		},
		ItemSelector: asl.Object(selector...),
		ItemProcessor: &asl.ItemProcessor{
			ProcessorConfig: &asl.ProcessorConfig{Mode: asl.ModeDistributed, ExecutionType: asl.ExecutionStandard},
			Machine:         asl.Machine{StartAt: blocks[0].start},
		},
		MaxConcurrency: new(g.def.MaxConcurrency),
		ResultPath:     asl.NullReferencePath(),
		Catch:          g.catchAll(),
	}
	chain(&m.ItemProcessor.States, "", blocks...)
	return m
}

// task builds a Task state invoking step with payload, in the generator's
// mode. Its result is discarded: handlers write to the table and blob store.
func (g generator) task(step string, payload *asl.Template, retry pipeline.RetryPolicy, retryable bool, timeout int) *asl.Task {
	t := &asl.Task{ResultPath: asl.NullReferencePath()}
	if timeout > 0 {
		t.TimeoutSeconds = new(timeout)
	}
	switch g.mode {
	case ModeLocal:
		t.Resource = LocalResource(step)
		t.Parameters = payload
	case ModeLambda:
		t.Resource = "arn:aws:states:::lambda:invoke"
		t.Parameters = asl.Object(asl.Field("FunctionName", "${"+VarStepsFunctionARN+"}"), asl.NestedField("Payload", payload))
		t.Retry = lambdaRetriers()
	case ModeActivity:
		t.Resource = "${" + VarActivityARNPrefix + "}" + step
		t.Parameters = payload
		t.HeartbeatSeconds = heartbeat(timeout)
	case ModeQueue:
		body := asl.Object(append([]asl.TemplateField{asl.DynamicField(QueueTaskTokenField, "$$.Task.Token")}, payload.Fields...)...)
		t.Resource = "arn:aws:states:::sqs:sendMessage.waitForTaskToken"
		t.Parameters = asl.Object(asl.Field("QueueUrl", "${"+VarTaskQueueURL+"}"), asl.NestedField("MessageBody", body))
		t.HeartbeatSeconds = heartbeat(timeout)
	}
	if retryable && retry.MaxAttempts > 0 {
		t.Retry = append(t.Retry, transientRetrier(retry))
	}
	return t
}

// heartbeat is the HeartbeatSeconds of a worker-served task: none when the
// task's own timeout is that short anyway (ASL wants the heartbeat below
// the timeout, and the workers beat at a fixed interval).
func heartbeat(timeout int) *int {
	if timeout > 0 && timeout <= TaskHeartbeatSeconds {
		return nil
	}
	return new(TaskHeartbeatSeconds)
}

// lambdaRetriers retry the Lambda service's own faults.
func lambdaRetriers() []asl.Retrier {
	return []asl.Retrier{
		backoff(lambdaServiceErrors, pipeline.RetryPolicy{IntervalSeconds: 1, MaxAttempts: 6, BackoffRate: 2, MaxDelaySeconds: 30}),
		// A function killed by its timeout or memory limit: worth one
		// more try, not six.
		backoff([]string{lambdaUnknownError}, pipeline.RetryPolicy{IntervalSeconds: 2, MaxAttempts: 1, BackoffRate: 2}),
	}
}

// transientRetrier retries a stage's transient failures with its policy.
func transientRetrier(p pipeline.RetryPolicy) asl.Retrier { return backoff(transientErrors, p) }

// backoff retries errors with jittered exponential backoff; MaxDelaySeconds
// is left out when the policy sets none.
func backoff(errors []string, p pipeline.RetryPolicy) asl.Retrier {
	r := asl.Retrier{
		ErrorEquals:     errors,
		IntervalSeconds: new(p.IntervalSeconds),
		MaxAttempts:     new(p.MaxAttempts),
		BackoffRate:     new(p.BackoffRate),
		JitterStrategy:  asl.JitterFull,
	}
	if p.MaxDelaySeconds > 0 {
		r.MaxDelaySeconds = new(p.MaxDelaySeconds)
	}
	return r
}

// catchAll routes any uncaught failure to the workflow_failed recorder,
// keeping the original input and putting {Error, Cause} under $.error. In a
// pipeline with a review, a review still waiting is no failure: it ends the
// execution at its own state, and the embedded engine parks the workflow.
func (g generator) catchAll() []asl.Catcher {
	all := asl.Catcher{ErrorEquals: []string{asl.ErrorAll}, ResultPath: asl.ReferencePathOf("$.error"), Next: StateWorkflowFailed}
	if !g.hasReview() {
		return []asl.Catcher{all}
	}
	return []asl.Catcher{{ErrorEquals: []string{steperr.NameReviewPending}, Next: StateWaitingReview}, all}
}

// hasReview reports whether some stage waits for a person.
func (g generator) hasReview() bool {
	return slices.ContainsFunc(g.def.Stages, func(st pipeline.Stage) bool { return st.Run.Kind() == pipeline.RunReview })
}

// awaitReview makes a review stage's task wait as long as the review
// takes: no timeout or heartbeat (the hard limit is the review's own, kept
// by the `work` pass and the reconciler), and on Lambda the
// waitForTaskToken form, whose token the handler stores on the review.
func (g generator) awaitReview(t *asl.Task, payload *asl.Template) {
	t.TimeoutSeconds, t.HeartbeatSeconds = nil, nil
	if g.mode == ModeLambda {
		body := asl.Object(append([]asl.TemplateField{asl.DynamicField(QueueTaskTokenField, "$$.Task.Token")}, payload.Fields...)...)
		t.Resource = "arn:aws:states:::lambda:invoke.waitForTaskToken"
		t.Parameters = asl.Object(asl.Field("FunctionName", "${"+VarStepsFunctionARN+"}"), asl.NestedField("Payload", body))
	}
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
