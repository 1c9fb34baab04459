package pipelinedeploy

import (
	"maps"
	"testing"

	"github.com/docpipe/docpipe/statemachine"
)

// The task mode and its variables are read back from each deployed form of
// the built-in pipeline's state machine.
func TestModeOfDeployedDefinitions(t *testing.T) {
	for mode, vars := range map[statemachine.Mode]map[string]string{
		statemachine.ModeQueue:    {statemachine.VarTaskQueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/docpipe-tasks"},
		statemachine.ModeLambda:   {statemachine.VarStepsFunctionARN: "arn:aws:lambda:us-east-1:123456789012:function:docpipe-steps"},
		statemachine.ModeActivity: {statemachine.VarActivityARNPrefix: "arn:aws:states:us-east-1:123456789012:activity:docpipe-"},
	} {
		tmpl, err := statemachine.Definition(mode)
		if err != nil {
			t.Fatal(err)
		}
		deployed, err := statemachine.Render(tmpl, vars)
		if err != nil {
			t.Fatal(err)
		}
		gotMode, gotVars, err := Mode(deployed)
		if err != nil || gotMode != mode || !maps.Equal(gotVars, vars) {
			t.Errorf("%s: Mode = %s, %v, %v; want %s, %v", mode, gotMode, gotVars, err, mode, vars)
		}
	}
	if _, _, err := Mode([]byte(`{"StartAt":"x","States":{"x":{"Type":"Pass","End":true}}}`)); err == nil {
		t.Error("a state machine that is not docpipe's gave a mode")
	}
}

func TestStateMachineName(t *testing.T) {
	if got := StateMachineName("arn:aws:states:us-east-1:123456789012:stateMachine:docpipe", "redact", 12); got != "docpipe-redact-v12" {
		t.Errorf("StateMachineName = %q", got)
	}
}
