package asl

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const sample = `{
  "Comment": "sample",
  "StartAt": "Prep",
  "TimeoutSeconds": 3600,
  "States": {
    "Prep": {"Type": "Task", "Resource": "arn:prep", "InputPath": null, "ResultPath": "$.prep",
      "Retry": [{"ErrorEquals": ["TransientError"], "IntervalSeconds": 2, "MaxAttempts": 4, "BackoffRate": 2.5, "MaxDelaySeconds": 30, "JitterStrategy": "FULL"}],
      "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Failed"}],
      "Next": "Route"},
    "Route": {"Type": "Choice", "Choices": [
        {"And": [{"Variable": "$.n", "NumericGreaterThan": 0}, {"Not": {"Variable": "$.s", "IsNull": true}}], "Next": "Fan"}],
      "Default": "Done"},
    "Fan": {"Type": "Map", "ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "JSON", "MaxItems": 10},
        "Parameters": {"Bucket": "b", "Key.$": "$.key"}},
      "ItemSelector": {"v.$": "$$.Map.Item.Value"}, "MaxConcurrency": 4, "ToleratedFailurePercentage": 5, "Label": "Fan",
      "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Work",
        "States": {"Work": {"Type": "Task", "Resource": "arn:work", "End": true}}},
      "ResultPath": null, "Next": "Both"},
    "Both": {"Type": "Parallel", "Branches": [
        {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 1, "End": true}}},
        {"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": {"x": 1}, "End": true}}}], "Next": "Done"},
    "Done": {"Type": "Succeed"},
    "Failed": {"Type": "Fail", "Error": "Pipeline.Failed", "CausePath": "$.error.Cause"}
  }
}`

func TestParseAndValidateSample(t *testing.T) {
	t.Parallel()
	sm, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(sm); err != nil {
		t.Fatal(err)
	}
	if got := sm.States.Names; !reflect.DeepEqual(got, []string{"Prep", "Route", "Fan", "Both", "Done", "Failed"}) {
		t.Errorf("state order = %v", got)
	}
	task := sm.States.ByName["Prep"].(*Task)
	if !task.InputPath.Set || !task.InputPath.Null || task.OutputPath.Set {
		t.Errorf("InputPath = %+v, OutputPath = %+v", task.InputPath, task.OutputPath)
	}
	if r := task.Retry[0]; r.Interval() != 2 || r.Attempts() != 4 || r.Backoff() != 2.5 {
		t.Errorf("retrier = %+v", r)
	}
	m := sm.States.ByName["Fan"].(*Map)
	if !m.Distributed() || m.Processor().StartAt != "Work" || *m.ItemReader.ReaderConfig.MaxItems != 10 {
		t.Errorf("map = %+v", m)
	}
	rule := sm.States.ByName["Route"].(*Choice).Choices[0]
	if len(rule.And) != 2 || rule.And[1].Not.Operator != "IsNull" || rule.And[0].Value != 0.0 {
		t.Errorf("rule = %+v", rule)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	sm, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(sm)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal([]byte(sample), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip differs:\n got %s", b)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := json.Marshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if string(b2) != string(b) {
		t.Errorf("re-marshalled definition differs:\n%s\n%s", b, b2)
	}
}

func TestMarshalFillsType(t *testing.T) {
	t.Parallel()
	sm := &StateMachine{StartAt: "A"}
	sm.States.Add("A", &Pass{Flow: Flow{Next: "B"}, ResultPath: NullReferencePath()})
	sm.States.Add("B", &Succeed{IO: IO{OutputPath: PathOf("$.x")}})
	b, err := json.Marshal(sm)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"StartAt":"A","States":{"A":{"Type":"Pass","ResultPath":null,"Next":"B"},"B":{"Type":"Succeed","OutputPath":"$.x"}}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if _, err := Parse(b); err != nil {
		t.Fatal(err)
	}
}

func TestParseStrict(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ def, want string }{
		"unknown top field":   {`{"StartAt":"A","States":{"A":{"Type":"Succeed"}},"Bogus":1}`, `unknown field "Bogus"`},
		"unknown state field": {`{"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"Resultt":1}}}`, `state "A": json: unknown field "Resultt"`},
		"unknown type":        {`{"StartAt":"A","States":{"A":{"Type":"Sleep"}}}`, `unknown state type "Sleep"`},
		"missing type":        {`{"StartAt":"A","States":{"A":{"End":true}}}`, `missing Type`},
		"duplicate state":     {`{"StartAt":"A","States":{"A":{"Type":"Succeed"},"A":{"Type":"Succeed"}}}`, `duplicate state name "A"`},
		"nested unknown": {`{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"X","States":{"X":{"Type":"Task","Resource":"r","End":true,"Retry":[{"ErrorEquals":["A"],"Tries":1}]}}}}}}`,
			`unknown field "Tries"`},
		"unknown choice operator": {`{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.a","StringContains":"x","Next":"C"}]}}}`, `unknown field "StringContains"`},
		"wrong field type":        {`{"StartAt":"A","States":{"A":{"Type":"Wait","Seconds":"5","End":true}}}`, `cannot unmarshal string`},
		"trailing data":           {`{"StartAt":"A","States":{"A":{"Type":"Succeed"}}} {}`, `trailing data`},
		"not json":                {`{"StartAt":`, `unexpected EOF`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tc.def))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
