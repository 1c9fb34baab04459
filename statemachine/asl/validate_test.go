package asl

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func problems(t *testing.T, def string) []string {
	t.Helper()
	sm, err := Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	err = Validate(sm)
	var ve *ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ve) {
		t.Fatalf("Validate returned %T, want *ValidationError", err)
	}
	var out []string
	for _, p := range ve.Problems {
		out = append(out, p.String())
	}
	return out
}

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	const def = `{
  "StartAt": "Missing",
  "TimeoutSeconds": 0,
  "States": {
    "A": {"Type": "Task", "Next": "Nowhere", "End": true, "InputPath": "a.b", "ResultPath": "$.x[*]",
      "TimeoutSeconds": 5, "HeartbeatSeconds": 5,
      "Retry": [
        {"ErrorEquals": ["States.ALL", "Other"], "MaxAttempts": -1, "IntervalSeconds": 0, "BackoffRate": 0.5, "MaxDelaySeconds": 0, "JitterStrategy": "SOME"},
        {"ErrorEquals": []}],
      "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Ghost"}, {"ErrorEquals": ["X"]}]},
    "B": {"Type": "Pass", "Parameters": {"x.$": 5, "y.$": "$..deep", "z.$": "States.Nope(1)", "w.$": "States.ArrayLength(1, 2)"}},
    "C": {"Type": "Choice", "Choices": [
        {"Variable": "$.a", "StringEquals": 1},
        {"Variable": "$.a", "NumericEquals": 1, "NumericLessThan": 2, "Next": "A"},
        {"And": [{"Variable": "$.a", "IsNull": true, "Next": "A"}], "Next": "A"},
        {"Variable": "$.t", "TimestampEquals": "someday", "Next": "A"},
        {"Next": "A"}],
      "Default": "Gone"},
    "W": {"Type": "Wait", "Seconds": 1, "Timestamp": "2024-01-01T00:00:00Z", "End": true},
    "F": {"Type": "Fail", "Error": "E", "ErrorPath": "$.e"},
    "M": {"Type": "Map", "End": true, "MaxConcurrency": -1, "ToleratedFailureCount": 1,
      "ItemProcessor": {"StartAt": "I", "States": {"I": {"Type": "Task", "Resource": "r"}}}},
    "D": {"Type": "Map", "End": true, "ToleratedFailurePercentage": 101,
      "ItemReader": {"Resource": "arn:aws:states:::s3:listObjectsV2", "ReaderConfig": {"InputType": "CSV"}, "Parameters": {"Bucket": "b"}},
      "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED"}, "StartAt": "X", "States": {"X": {"Type": "Succeed"}}}},
    "P": {"Type": "Parallel", "End": true, "Branches": [{"StartAt": "Q", "States": {"Q": {"Type": "Pass", "Next": "A"}, "R": {"Type": "Succeed"}}}]}
  }
}`
	got := problems(t, def)
	want := []string{
		"TimeoutSeconds: must be positive, got 0",
		`StartAt: refers to unknown state "Missing"`,
		"States.A: has both Next and End",
		`States.A.InputPath: path "a.b" must start with $`,
		"States.A.Resource: is required",
		`States.A.ResultPath: reference path "$.x[*]" must not contain wildcards`,
		"States.A.Retry[0].ErrorEquals: States.ALL must appear alone",
		"States.A.Retry[0].ErrorEquals: States.ALL must be in the last retrier or catcher",
		"States.A.Retry[0].MaxAttempts: must be ≥ 0, got -1",
		"States.A.Retry[0].IntervalSeconds: must be between 1 and 99999999, got 0",
		"States.A.Retry[0].BackoffRate: must be ≥ 1.0, got 0.5",
		"States.A.Retry[0].MaxDelaySeconds: must be between 1 and 31622400, got 0",
		`States.A.Retry[0].JitterStrategy: must be FULL or NONE, got "SOME"`,
		"States.A.Retry[1].ErrorEquals: must list at least one error name",
		"States.A.Catch[0].ErrorEquals: States.ALL must be in the last retrier or catcher",
		`States.A.Catch[0].Next: refers to unknown state "Ghost"`,
		"States.A.Catch[1].Next: is required",
		"States.A.HeartbeatSeconds: must be smaller than TimeoutSeconds (5 ≥ 5)",
		"States.B: needs Next or End",
		"States.B.Parameters.w.$: intrinsic \"States.ArrayLength(1, 2)\": States.ArrayLength takes 1 arguments, got 2",
		"States.B.Parameters.x.$: value of a .$ field must be a string",
		`States.B.Parameters.y.$: path "$..deep": deep scan (..) is not supported`,
		"States.B.Parameters.z.$: intrinsic \"States.Nope(1)\": unknown function \"States.Nope\"",
		"States.C.Choices[0].Next: is required on a top-level rule",
		"States.C.Choices[0].StringEquals: operand must be a string",
		"States.C.Choices[1]: has more than one comparison operator (NumericEquals and NumericLessThan)",
		"States.C.Choices[2].And[0].Next: is only allowed on top-level rules",
		`States.C.Choices[3].TimestampEquals: timestamp "someday" is not RFC 3339`,
		"States.C.Choices[4]: needs exactly one of a comparison operator, And, Or, Not",
		`States.C.Default: refers to unknown state "Gone"`,
		"States.W: needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath (has 2)",
		"States.F: has both Error and ErrorPath",
		"States.M.MaxConcurrency: must be ≥ 0, got -1",
		"States.M.ToleratedFailureCount: is only allowed in DISTRIBUTED mode",
		"States.M.ItemProcessor.States.I: needs Next or End",
		"States.D.ToleratedFailurePercentage: must be between 0 and 100, got 101",
		`States.D.ItemReader.Resource: only arn:aws:states:::s3:getObject is supported, got "arn:aws:states:::s3:listObjectsV2"`,
		`States.D.ItemReader.ReaderConfig.InputType: only JSON is supported, got "CSV"`,
		"States.D.ItemReader.Parameters: needs Key (or Key.$)",
		`States.P.Branches[0].States.Q.Next: refers to unknown state "A"`,
		"States.P.Branches[0].States.R: state is unreachable from StartAt",
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing problem %q", w)
		}
	}
	if t.Failed() {
		t.Logf("got:\n  %s", strings.Join(got, "\n  "))
	}
}

func TestValidateUnreachableAndCatchReachability(t *testing.T) {
	t.Parallel()
	got := problems(t, `{"StartAt":"A","States":{
	  "A":{"Type":"Task","Resource":"r","Catch":[{"ErrorEquals":["X"],"Next":"Handler"}],"Next":"Choose"},
	  "Choose":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"Next":"Done"}],"Default":"Done"},
	  "Handler":{"Type":"Succeed"},
	  "Done":{"Type":"Succeed"},
	  "Orphan":{"Type":"Pass","Next":"Done"}}}`)
	want := []string{"States.Orphan: state is unreachable from StartAt"}
	if !slices.Equal(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
}

func TestValidateEmpty(t *testing.T) {
	t.Parallel()
	got := problems(t, `{"States":{}}`)
	want := []string{"States: must contain at least one state", "StartAt: is required"}
	if !slices.Equal(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
	if err := Validate(nil); err == nil {
		t.Error("Validate(nil) succeeded")
	}
}

func TestValidateInlineOnlyAndJSONata(t *testing.T) {
	t.Parallel()
	got := problems(t, `{"StartAt":"M","QueryLanguage":"JSONata","States":{"M":{"Type":"Map","End":true,"Label":"L",
	  "ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"}},
	  "Iterator":{"StartAt":"X","States":{"X":{"Type":"Succeed"}}}}}}`)
	for _, w := range []string{
		`QueryLanguage: only JSONPath is supported, got "JSONata"`,
		"States.M.ItemReader: is only allowed in DISTRIBUTED mode",
		"States.M.Label: is only allowed in DISTRIBUTED mode",
	} {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q in %q", w, got)
		}
	}
}
