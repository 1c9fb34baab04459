//go:build integration

package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
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

	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/statemachine"
	"github.com/docpipe/docpipe/statemachine/asl"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// This file runs every golden case on Step Functions (AWS_ENDPOINT_URL:
// moto_server with execute_state_machine enabled, LocalStack, or AWS) and
// compares output, error and cause with want.json. Task states become
// sqs:sendMessage.waitForTaskToken tasks, answered from the case's
// tasks.json by a queue worker: the project's queue mode, the one task
// integration emulators can run. Cases listed in sfnSkipped cannot run on a
// real clock or emulator; cases in sfnDifferences diverge on the emulator
// awstest.Emulator names, and the test pins what that emulator's Step
// Functions gives for them (DIFFERENCES.md explains each).

// sfnCaseDeadline bounds one case's execution in real time, unless its pin
// sets a deadline of its own.
const sfnCaseDeadline = 60 * time.Second

// sfnSkipped are the cases whose want.json depends on something only the
// interpreter's test harness has.
var sfnSkipped = map[string]string{
	"intrinsics_math_merge_uuid": "States.MathRandom and States.UUID are seeded by the harness; Step Functions' are random",
	"retry_max_delay_exhausted":  "its retry delays add up to 150 s of real time",
}

// sfnResult is how one execution ended.
type sfnResult struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	Cause  string          `json:"cause,omitempty"`
}

// sfnPin is what Step Functions gives for a case that differs from
// want.json: regular expressions matching the whole compact output JSON,
// error and cause. Deadline, when set, bounds the case's execution instead
// of sfnCaseDeadline: a case pinned as still running need be watched only
// until well past the time it should have ended.
type sfnPin struct {
	Output, Error, Cause string
	Deadline             time.Duration `json:",omitempty"`
}

func (p sfnPin) matches(r sfnResult) bool {
	full := func(re, s string) bool { return regexp.MustCompile(`^(?:` + re + `)$`).MatchString(s) }
	return full(p.Output, compact(r.Output)) && full(p.Error, r.Error) && full(p.Cause, r.Cause)
}

func compact(b json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

// sfnDifferences pins, for each emulator, what its Step Functions gives for
// the cases whose result differs from want.json; DIFFERENCES.md explains
// each. Against AWS itself no case may differ.
var sfnDifferences = map[string]map[string]sfnPin{
	awstest.Moto:       motoDifferences,
	awstest.LocalStack: localStackDifferences,
}

// motoDifferences are moto 5.2.5's.
var motoDifferences = map[string]sfnPin{
	"cancellation_aborts":                      {Error: `status ABORTED`},
	"catch_default_resultpath":                 {Output: `\{"Error":"Custom\.Error","Cause":null\}`},
	"catch_taskfailed_matching":                {Output: `\{"a":\{"Error":"Custom\.Error","Cause":null\},"b":\{"Error":"InvalidDocumentError","Cause":null\},"c":\{"Error":"States\.Timeout","Cause":""\}\}`},
	"choice_default_and_paths":                 {Output: `chosen default`},
	"choice_missing_variable_is_runtime":       {Output: `\{\}`},
	"choice_no_match":                          {Error: `States\.Runtime`, Cause: `RuntimeError\(\('No branching option reached in state %s', 'C'\)\)`},
	"choice_path_operators":                    {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. Custom Error Names MUST NOT begin with the prefix 'States\.', got 'States\.Runtime'\.`},
	"choice_string_operators":                  {Output: `\["eq","matches","gt","gt","lt","gte","gt","lte","none"\]`},
	"choice_timestamp_operators":               {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. Custom Error Names MUST NOT begin with the prefix 'States\.', got 'States\.Runtime'\.`},
	"context_object":                           {Output: `\{"entered":"[0-9T:.+-]+","exec":"arn:aws:states:us-east-1:123456789012:execution:golden-context-object-[0-9a-f-]+:None","input":\{"hello":"world"\},"name":null,"retry":1,"sm":"arn:aws:states:us-east-1:123456789012:stateMachine:golden-context-object-[0-9a-f-]+","start":"[0-9T:.+-]+","state":"T","tokenParts":"5"\}`},
	"distributed_map_child_context":            {Error: `CreateStateMachine`, Cause: `operation error SFN: CreateStateMachine, https response error StatusCode: 400, RequestID: \w+, api error UnknownError: ASLParserException line 1:93, at "EXPRESS", mismatched input '"EXPRESS"' expecting '"STANDARD"'`},
	"distributed_map_malformed_manifest":       {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. Expecting value: line 1 column 15 \(char 14\)`},
	"distributed_map_manifest_not_array":       {Error: `States\.ItemReaderFailed`, Cause: `Attempting to map over non-iterable node\.`},
	"distributed_map_missing_manifest":         {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. An error occurred \(NoSuchKey\) when calling the GetObject operation: The specified key does not exist\.`},
	"distributed_map_no_tolerance":             {Output: `\["ok","ok","ok",null,"ok","ok","ok",null,"ok","ok"\]`},
	"distributed_map_tolerated_count_exceeded": {Output: `\["ok","ok","ok",null,"ok","ok","ok",null,"ok","ok"\]`},
	"distributed_map_tolerated_percentage":     {Error: `CreateStateMachine`, Cause: `operation error SFN: CreateStateMachine, https response error StatusCode: 400, RequestID: \w+, api error UnknownError: ASLParserException line 1:836, at 20, no viable alternative at input '"ToleratedFailurePercentage":20'`},
	"execution_timeout":                        {Error: `status TIMED_OUT`},
	// Timing on a real clock: kept alive on some runs.
	"heartbeat_kept_alive":                   {Output: `|\{"heartbeat":5,"retryCount":0,"state":"T","timeout":60,"tokenSet":true\}`, Error: `States\.Timeout|`},
	"heartbeat_timeout_caught":               {Output: `\{"err":\{"Error":"States\.Timeout","Cause":""\}\}`},
	"inputpath_missing_is_runtime":           {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'T' \(entered at the event id #\d+\)\. Invalid path '\$\.missing' : No results for path: \$\['missing'\]`},
	"intrinsic_failure_caught_by_task_catch": {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'T' \(entered at the event id #\d+\)\. Expecting property name enclosed in double quotes: line 1 column 2 \(char 1\)`},
	"intrinsic_failure_fails_execution":      {Error: `States\.Runtime`, Cause: `IndexError\(list index out of range\)`},
	"intrinsics_arrays":                      {Error: `States\.Runtime`, Cause: `ValueError\(Expected step argument to be non negative, but got: '-2'\.\)`},
	"intrinsics_strings_json":                {Error: `States\.Runtime`, Cause: `IndexError\(Replacement index 1 out of range for positional args tuple\)`},
	"map_inline_failure_caught":              {Output: `\{"items":\[\{"n":1\},\{"n":2,"bad":true\},\{"n":3\}\],"err":\{"Error":"Item\.Bad","Cause":""\}\}`},
	"map_items_not_array":                    {Error: `States\.QueryEvaluationError`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. Map state input must be an array but was: <class 'str'>`},
	"parallel_branch_failure_cancels":        {Error: `Branch\.Broke`, Cause: `b2`},
	"parallel_failure_uncaught":              {Error: `Deep\.Error`},
	"parameters_path_missing_is_runtime":     {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'P' \(entered at the event id #\d+\)\. The JSONPath '\$\.nope' specified for the field 'x\.\$' could not be found in the input '\{"a": 1\}'`},
	"pass_parameters_templates":              {Output: `\{"all":\["a","b"\],"arr":\[\{"x":\["b"\]\},"lit"\],"first":\{"id":"a"\},"name":"ada","nested":\{"v":\{"name":"ada"\}\},"quoted":"ok","static":\{"list":\[1,"two",null\],"n":1\}\}`},
	"resultpath_on_string_is_runtime":        {Output: `\{"Error":"States\.Runtime","Cause":"'str' object does not support item assignment"\}`},
	// Its retries wait 26 s in all; moto mostly ends after some 95 s,
	// sometimes in time with the right output.
	"retry_backoff":               {Output: `|\{"retry":3\}`, Error: `still running after 45s|`, Deadline: 45 * time.Second},
	"retry_first_match_decides":   {Output: `\{"doc":"d1","err":\{"Error":"Permanent","Cause":null\}\}`},
	"retry_then_catch_resultpath": {Output: `\{"doc":"d1","error":\{"Error":null,"Cause":null\}\}`},
	"task_timeout":                {Error: `States\.Timeout`},
	// On a busy emulator the second try sometimes times out too.
	"task_timeout_path_retry":   {Output: `second try|`, Error: `|States\.Timeout`},
	"uncaught_task_error":       {Error: `TooLargeError`},
	"wait_paths":                {Output: `\{"now":"[0-9T:.+-]+"\}`},
	"wait_seconds":              {Output: `\{"now":"[0-9T:.+-]+"\}`},
	"wait_seconds_path_invalid": {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'W' \(entered at the event id #\d+\)\. The SecondsPath parameter cannot be parsed as a long value: \$\.delay == soon`},
}

// localStackDifferences are LocalStack 2026.3.0's (host mode).
var localStackDifferences = map[string]sfnPin{
	"cancellation_aborts":                      {Error: `status ABORTED`},
	"catch_taskfailed_matching":                {Output: `\{"a":\{"Error":"Custom\.Error","Cause":"c"\},"b":\{"Error":"InvalidDocumentError","Cause":"not a pdf"\},"c":\{"Error":"States\.Timeout","Cause":""\}\}`},
	"choice_missing_variable_is_runtime":       {Output: `\{\}`},
	"choice_no_match":                          {Error: `States\.Runtime`, Cause: `RuntimeError\(\('No branching option reached in state %s', 'C'\)\)`},
	"choice_path_operators":                    {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. Custom Error Names MUST NOT begin with the prefix 'States\.', got 'States\.Runtime'\.`},
	"choice_string_operators":                  {Output: `\["eq","matches","gt","gt","lt","gte","gt","lte","none"\]`},
	"choice_timestamp_operators":               {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. Custom Error Names MUST NOT begin with the prefix 'States\.', got 'States\.Runtime'\.`},
	"context_object":                           {Output: `\{"entered":"[0-9T:.Z+-]+","exec":"arn:aws:states:us-east-1:000000000000:execution:golden-context-object-[0-9a-f-]+:[0-9a-f-]+","input":\{"hello":"world"\},"name":"[0-9a-f-]+","retry":1,"sm":"arn:aws:states:us-east-1:000000000000:stateMachine:golden-context-object-[0-9a-f-]+","start":"[0-9T:.Z+-]+","state":"T","tokenParts":"5"\}`},
	"distributed_map_child_context":            {Error: `CreateStateMachine`, Cause: `operation error SFN: CreateStateMachine, https response error StatusCode: 400, RequestID: [\w-]+, InvalidDefinition: ASLParserException line 1:\d+, at "EXPRESS", mismatched input '"EXPRESS"' expecting '"STANDARD"'`},
	"distributed_map_malformed_manifest":       {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. Expecting value: line 1 column 15 \(char 14\)`},
	"distributed_map_manifest_not_array":       {Error: `States\.ItemReaderFailed`, Cause: `Attempting to map over non-iterable node\.`},
	"distributed_map_missing_manifest":         {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. An error occurred \(NoSuchKey\) when calling the GetObject operation: The specified key does not exist\.`},
	"distributed_map_no_tolerance":             {Output: `\["ok","ok","ok",null,"ok","ok","ok",null,"ok","ok"\]`},
	"distributed_map_tolerated_count_exceeded": {Output: `\["ok","ok","ok",null,"ok","ok","ok",null,"ok","ok"\]`},
	"distributed_map_tolerated_percentage":     {Error: `CreateStateMachine`, Cause: `operation error SFN: CreateStateMachine, https response error StatusCode: 400, RequestID: [\w-]+, InvalidDefinition: ASLParserException line 1:\d+, at 20, no viable alternative at input '"ToleratedFailurePercentage":20'`},
	"execution_timeout":                        {Error: `status TIMED_OUT`},
	// Timing on a real clock: kept alive on some runs.
	"heartbeat_kept_alive":                   {Output: `|\{"heartbeat":5,"retryCount":0,"state":"T","timeout":60,"tokenSet":true\}`, Error: `States\.Timeout|`},
	"heartbeat_timeout_caught":               {Output: `\{"err":\{"Error":"States\.Timeout","Cause":""\}\}`},
	"inputpath_missing_is_runtime":           {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'T' \(entered at the event id #\d+\)\. Invalid path '\$\.missing' : No results for path: \$\['missing'\]`},
	"intrinsic_failure_caught_by_task_catch": {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'T' \(entered at the event id #\d+\)\. Expecting property name enclosed in double quotes: line 1 column 2 \(char 1\)`},
	"intrinsic_failure_fails_execution":      {Error: `States\.Runtime`, Cause: `IndexError\(list index out of range\)`},
	"intrinsics_arrays":                      {Error: `States\.Runtime`, Cause: `ValueError\(Expected step argument to be non negative, but got: '-2'\.\)`},
	"intrinsics_strings_json":                {Error: `States\.Runtime`, Cause: `IndexError\(Replacement index 1 out of range for positional args tuple\)`},
	"map_items_not_array":                    {Error: `States\.QueryEvaluationError`, Cause: `An error occurred while executing the state 'M' \(entered at the event id #\d+\)\. Map state input must be an array but was: <class 'str'>`},
	"parallel_branch_failure_cancels":        {Error: `Branch\.Broke`, Cause: `b2`},
	"parameters_path_missing_is_runtime":     {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'P' \(entered at the event id #\d+\)\. The JSONPath '\$\.nope' specified for the field 'x\.\$' could not be found in the input '\{"a": 1\}'`},
	"resultpath_on_string_is_runtime":        {Output: `\{"Error":"States\.Runtime","Cause":"'str' object does not support item assignment"\}`},
	"retry_backoff":                          {Error: `still running after 1m0s`},
	"retry_then_catch_resultpath":            {Output: `\{"doc":"d1","error":\{"Error":null,"Cause":"disk on fire"\}\}`},
	"task_timeout":                           {Error: `States\.Timeout`},
	"wait_paths":                             {Output: `\{"now":"[0-9T:.+-]+"\}`},
	"wait_seconds":                           {Output: `\{"now":"[0-9T:.+-]+"\}`},
	"wait_seconds_path_invalid":              {Error: `States\.Runtime`, Cause: `An error occurred while executing the state 'W' \(entered at the event id #\d+\)\. The SecondsPath parameter cannot be parsed as a long value: \$\.delay == soon`},
	"task_timeout_path_retry":                {Output: `"second try"|`, Error: `|States\.Timeout`},
}

func TestGoldenOnStepFunctions(t *testing.T) {
	cfg := awstest.Config(t)
	// Long polls and concurrent executions: no one-request-at-a-time client
	// (that is only needed for DynamoDB's conditional writes on moto).
	cfg.HTTPClient = awshttp.NewBuildableClient()
	h := &goldenHarness{
		sfn: awssfn.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg),
		s3:    s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }),
		cases: map[string]*scriptedTasks{},
	}
	h.deployQueue(t)
	differences := sfnDifferences[awstest.Emulator()]

	defs, err := filepath.Glob("testdata/*/definition.asl.json")
	if err != nil {
		t.Fatal(err)
	}
	results := make(map[string]sfnResult, len(defs))
	failures := make(map[string]error)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, def := range defs {
		dir := filepath.Dir(def)
		name := filepath.Base(dir)
		if _, skip := sfnSkipped[name]; skip {
			continue
		}
		wg.Go(func() {
			deadline := sfnCaseDeadline
			if pin := differences[name]; pin.Deadline > 0 {
				deadline = pin.Deadline
			}
			res, err := h.runCase(t, dir, deadline)
			mu.Lock()
			defer mu.Unlock()
			results[name], failures[name] = res, err
		})
	}
	wg.Wait()

	equal := 0
	for _, def := range defs {
		dir := filepath.Dir(def)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			if why, skip := sfnSkipped[name]; skip {
				t.Skip(why)
			}
			if err := failures[name]; err != nil {
				t.Fatal(err)
			}
			got := results[name]
			var w want
			readJSON(t, filepath.Join(dir, "want.json"), &w)
			same := jsonEqual(got.Output, w.Output) && got.Error == w.Error && got.Cause == w.Cause
			pinned, listed := differences[name]
			switch {
			case same && listed && !pinned.matches(got):
				t.Errorf("Step Functions (%s) now agrees with the interpreter (%s); drop the case from sfnDifferences and DIFFERENCES.md", awstest.Emulator(), show(got))
			case same:
				equal++
			case !listed:
				b, _ := json.Marshal(sfnPin{Output: regexp.QuoteMeta(compact(got.Output)), Error: regexp.QuoteMeta(got.Error), Cause: regexp.QuoteMeta(got.Cause)})
				t.Errorf("Step Functions (%s): %s\ninterpreter:    %s\npin: %s", awstest.Emulator(), show(got), show(sfnResult{w.Output, w.Error, w.Cause}), b)
			case !pinned.matches(got):
				t.Errorf("Step Functions (%s) changed: %s, pinned %+v; update sfnDifferences and DIFFERENCES.md", awstest.Emulator(), show(got), pinned)
			}
		})
	}
	t.Logf("%s: %d of %d cases equal on both engines, %d known differences, %d skipped", awstest.Emulator(), equal, len(defs), len(differences), len(sfnSkipped))
}

func show(r sfnResult) string {
	if r.Error != "" || r.Cause != "" {
		return fmt.Sprintf("error %q cause %q", r.Error, r.Cause)
	}
	return "output " + string(r.Output)
}

// goldenHarness is one task queue and the worker answering every case's
// tasks from its script.
type goldenHarness struct {
	sfn      *awssfn.Client
	sqs      *sqs.Client
	s3       *s3.Client
	queueURL string

	mu    sync.Mutex
	cases map[string]*scriptedTasks
}

// goldenTask is the message body of a rewritten Task state.
type goldenTask struct {
	TaskToken string `json:"task_token"`
	Step      string `json:"step"`
	Golden    struct {
		Case       string          `json:"case"`
		Resource   string          `json:"resource"`
		Input      json.RawMessage `json:"input"`
		Execution  string          `json:"execution"`
		State      string          `json:"state"`
		RetryCount int             `json:"retryCount"`
		Timeout    float64         `json:"timeout"`
		Heartbeat  float64         `json:"heartbeat"`
	} `json:"golden"`
}

func (h *goldenHarness) deployQueue(t *testing.T) {
	ctx := t.Context()
	q, err := h.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(awstest.UniqueName("golden"))})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	h.queueURL = aws.ToString(q.QueueUrl)
	t.Cleanup(func() {
		if _, err := h.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}); err != nil {
			t.Errorf("delete queue: %v", err)
		}
	})
	w := &sfn.QueueWorker{
		API: h.sfn, Queue: h.sqs, QueueURL: h.queueURL, Handler: h,
		TaskOptions: sfn.TaskOptions{
			Concurrency: 64,
			// The scripts heartbeat themselves (or not, to time out), so the
			// worker's own heartbeat must never come first.
			Heartbeat: time.Hour, HeartbeatTimeout: 3 * time.Hour,
			ShutdownGrace: time.Second,
			Logger:        slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
			// A script's error name, or none for a plain error.
			ErrorName: func(err error) string {
				var named interface{ ErrorName() string }
				if errors.As(err, &named) {
					return named.ErrorName()
				}
				return ""
			},
		},
	}
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

// Invoke answers one task message from its case's script, as the
// interpreter's golden harness does, on the real clock.
func (h *goldenHarness) Invoke(ctx context.Context, body []byte) ([]byte, error) {
	var m goldenTask
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	g := m.Golden
	h.mu.Lock()
	tasks := h.cases[g.Case]
	h.mu.Unlock()
	if tasks == nil {
		return nil, &TaskError{Name: "Test.UnknownCase", Cause: g.Case}
	}
	var in any
	if err := json.Unmarshal(g.Input, &in); err != nil {
		return nil, err
	}
	b, ok := tasks.pick(g.Resource, in)
	if !ok {
		return nil, &TaskError{Name: "Test.Unscripted", Cause: g.Resource}
	}
	if b.Sleep > 0 {
		if err := h.sleep(ctx, m, b); err != nil {
			return nil, err
		}
	}
	switch {
	case b.Error != "":
		return nil, &namedError{name: b.Error, msg: b.Cause}
	case b.Plain != "":
		return nil, errors.New(b.Plain)
	case b.Named != "":
		return nil, &namedError{name: b.Named, msg: b.Cause}
	case b.Context:
		return json.Marshal(map[string]any{
			"tokenSet": m.TaskToken != "", "state": g.State, "retryCount": g.RetryCount,
			"timeout": g.Timeout, "heartbeat": g.Heartbeat,
		})
	case b.Output != nil:
		return b.Output, nil
	}
	return g.Input, nil
}

// sleep waits b.Sleep seconds, sending a heartbeat every b.Heartbeat
// seconds when set, and gives up when the execution no longer runs (Step
// Functions dropped the task: timed out, branch canceled).
func (h *goldenHarness) sleep(ctx context.Context, m goldenTask, b behaviour) error {
	end := time.Now().Add(time.Duration(b.Sleep * float64(time.Second)))
	beat := time.Duration(b.Heartbeat * float64(time.Second))
	nextBeat := time.Now().Add(beat)
	for time.Now().Before(end) {
		if err := sleepCtx(ctx, min(time.Second, time.Until(end))); err != nil {
			return err
		}
		if beat > 0 && !time.Now().Before(nextBeat) {
			if _, err := h.sfn.SendTaskHeartbeat(ctx, &awssfn.SendTaskHeartbeatInput{TaskToken: aws.String(m.TaskToken)}); err != nil {
				return err
			}
			nextBeat = nextBeat.Add(beat)
		}
		ex, err := h.sfn.DescribeExecution(ctx, &awssfn.DescribeExecutionInput{ExecutionArn: aws.String(m.Golden.Execution)})
		if err == nil && ex.Status != sfntypes.ExecutionStatusRunning {
			return errors.New("execution ended")
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// runCase deploys a case's definition in queue form, runs it for up to
// limit, and returns how the execution ended.
func (h *goldenHarness) runCase(t *testing.T, dir string, limit time.Duration) (sfnResult, error) {
	name := filepath.Base(dir)
	ctx := t.Context()
	raw, err := os.ReadFile(filepath.Join(dir, "definition.asl.json"))
	if err != nil {
		return sfnResult{}, err
	}
	input := []byte(`{}`)
	if b, err := os.ReadFile(filepath.Join(dir, "input.json")); err == nil {
		input = b
	}
	var setup caseSetup
	readJSON(t, filepath.Join(dir, "tasks.json"), &setup)
	for res, bs := range setup.Tasks {
		for i := range bs {
			if bs[i].When != "" {
				if bs[i].when, err = asl.ParsePath(bs[i].When); err != nil {
					return sfnResult{}, fmt.Errorf("tasks.json %s: %v", res, err)
				}
			}
		}
	}
	h.mu.Lock()
	h.cases[name] = &scriptedTasks{script: setup.Tasks, pos: map[string]int{}, calls: map[string]int{}}
	h.mu.Unlock()

	var def any
	if err := json.Unmarshal(raw, &def); err != nil {
		return sfnResult{}, err
	}
	buckets, err := h.putObjects(t, setup, bytes.Contains(raw, []byte(`"ItemReader"`)))
	if err != nil {
		return sfnResult{}, err
	}
	rewriteTasks(def, name, h.queueURL, buckets)
	body, err := json.Marshal(def)
	if err != nil {
		return sfnResult{}, err
	}
	smName := awstest.UniqueName("golden-" + strings.ReplaceAll(name, "_", "-"))
	sm, err := h.sfn.CreateStateMachine(ctx, &awssfn.CreateStateMachineInput{
		Name: aws.String(smName), Definition: aws.String(string(body)),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/golden"),
	})
	if err != nil {
		return sfnResult{Error: "CreateStateMachine", Cause: err.Error()}, nil
	}
	defer func() {
		_, _ = h.sfn.DeleteStateMachine(context.Background(), &awssfn.DeleteStateMachineInput{StateMachineArn: sm.StateMachineArn})
	}()
	ex, err := h.sfn.StartExecution(ctx, &awssfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(string(input))})
	if err != nil {
		return sfnResult{}, err
	}
	if setup.CancelAfter > 0 {
		stop := time.AfterFunc(time.Duration(setup.CancelAfter*float64(time.Second)), func() {
			_, _ = h.sfn.StopExecution(context.Background(), &awssfn.StopExecutionInput{ExecutionArn: ex.ExecutionArn})
		})
		defer stop.Stop()
	}
	deadline := time.Now().Add(limit)
	for {
		d, err := h.sfn.DescribeExecution(ctx, &awssfn.DescribeExecutionInput{ExecutionArn: ex.ExecutionArn})
		if err != nil {
			return sfnResult{}, err
		}
		switch d.Status {
		case sfntypes.ExecutionStatusRunning:
		case sfntypes.ExecutionStatusSucceeded:
			return sfnResult{Output: json.RawMessage(aws.ToString(d.Output))}, nil
		default:
			res := sfnResult{Error: aws.ToString(d.Error), Cause: aws.ToString(d.Cause)}
			if res.Error == "" && res.Cause == "" {
				res.Error = "status " + string(d.Status)
			}
			return res, nil
		}
		if time.Now().After(deadline) {
			_, _ = h.sfn.StopExecution(context.Background(), &awssfn.StopExecutionInput{ExecutionArn: ex.ExecutionArn})
			return sfnResult{Error: fmt.Sprintf("still running after %v", limit)}, nil
		}
		if err := sleepCtx(ctx, 300*time.Millisecond); err != nil {
			return sfnResult{}, err
		}
	}
}

// putObjects stores the case's ItemReader objects in buckets of their own
// and returns the bucket each case bucket name maps to ("" for the others).
func (h *goldenHarness) putObjects(t *testing.T, setup caseSetup, reads bool) (map[string]string, error) {
	objects := map[string][]byte{}
	for k, v := range setup.Objects {
		objects[k] = v
	}
	for k, v := range setup.RawObjects {
		objects[k] = []byte(v)
	}
	buckets := map[string]string{}
	if reads {
		// Where a case reads a bucket it has no objects in.
		buckets[""] = awstest.Bucket(t, h.s3)
	}
	for k, body := range objects {
		bucket, key, _ := strings.Cut(k, "/")
		if buckets[bucket] == "" {
			buckets[bucket] = awstest.Bucket(t, h.s3)
		}
		if _, err := h.s3.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(buckets[bucket]), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			return nil, err
		}
	}
	return buckets, nil
}

// rewriteTasks turns every Task state under v into the queue form, its
// original input (Parameters, or the whole effective input) and the
// context a script may return carried in the message, and points
// ItemReaders at the case's buckets.
func rewriteTasks(v any, name, queueURL string, buckets map[string]string) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			rewriteTasks(e, name, queueURL, buckets)
		}
	case map[string]any:
		for _, e := range v {
			rewriteTasks(e, name, queueURL, buckets)
		}
		if r, ok := v["ItemReader"].(map[string]any); ok {
			if p, ok := r["Parameters"].(map[string]any); ok {
				if b, ok := p["Bucket"].(string); ok {
					if mapped := buckets[b]; mapped != "" {
						p["Bucket"] = mapped
					} else {
						p["Bucket"] = buckets[""]
					}
				}
			}
		}
		if v["Type"] != "Task" {
			return
		}
		golden := map[string]any{
			"case": name, "resource": v["Resource"],
			"execution.$": "$$.Execution.Id", "state.$": "$$.State.Name", "retryCount.$": "$$.State.RetryCount",
			"timeout": v["TimeoutSeconds"], "heartbeat": v["HeartbeatSeconds"],
		}
		if p, ok := v["Parameters"]; ok {
			golden["input"] = p
		} else {
			golden["input.$"] = "$"
		}
		if golden["timeout"] == nil {
			golden["timeout"] = 0
		}
		if golden["heartbeat"] == nil {
			golden["heartbeat"] = 0
		}
		v["Resource"] = "arn:aws:states:::sqs:sendMessage.waitForTaskToken"
		v["Parameters"] = map[string]any{
			"QueueUrl": queueURL,
			"MessageBody": map[string]any{
				statemachine.QueueTaskTokenField + ".$": "$$.Task.Token",
				"step":                                  "golden",
				"golden":                                golden,
			},
		}
	}
}

// documentedDifferences reads the table in DIFFERENCES.md: for each case it
// lists, what its cell says for each emulator ("equal", "skipped", or the
// difference).
func documentedDifferences(t *testing.T) map[string]map[string]string {
	b, err := os.ReadFile("DIFFERENCES.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|([^|]*)\\|([^|]*)\\|").FindAllStringSubmatch(string(b), -1) {
		doc[m[1]] = map[string]string{awstest.Moto: strings.TrimSpace(m[2]), awstest.LocalStack: strings.TrimSpace(m[3])}
	}
	return doc
}

// The table in DIFFERENCES.md says, for each emulator, exactly which cases
// sfnDifferences pins and sfnSkipped skips.
func TestGoldenDifferencesDocumented(t *testing.T) {
	doc := documentedDifferences(t)
	var listed []string
	for _, pins := range sfnDifferences {
		for name := range pins {
			listed = append(listed, name)
		}
	}
	for name := range sfnSkipped {
		listed = append(listed, name)
	}
	for _, name := range listed {
		if doc[name] == nil {
			t.Errorf("%s is pinned or skipped but not in DIFFERENCES.md", name)
		}
	}
	for name, cells := range doc {
		for emulator, cell := range cells {
			_, pinned := sfnDifferences[emulator][name]
			_, skipped := sfnSkipped[name]
			switch {
			case skipped && cell != "skipped":
				t.Errorf("%s (%s): skipped, DIFFERENCES.md says %q", name, emulator, cell)
			case !skipped && pinned && (cell == "equal" || cell == "skipped"):
				t.Errorf("%s (%s): pinned as a difference, DIFFERENCES.md says %q", name, emulator, cell)
			case !skipped && !pinned && cell != "equal":
				t.Errorf("%s (%s): not pinned, so it must be equal; DIFFERENCES.md says %q", name, emulator, cell)
			}
		}
	}
}
