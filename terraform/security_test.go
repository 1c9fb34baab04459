package terraform_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The defaults are the safe choice; each is a documented switch.
func TestSafeDefaults(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	for name, want := range map[string]cty.Value{
		"state_machine_include_execution_data": cty.False,
		"table_deletion_protection_enabled":    cty.True,
		"point_in_time_recovery_enabled":       cty.True,
	} {
		if got := m.eval(t, attr(t, m.variables[name], "default")); !got.RawEquals(want) {
			t.Errorf("var.%s defaults to %#v, want %#v", name, got, want)
		}
	}
	uses := map[string]bool{
		"var.state_machine_include_execution_data": m.refs(attr(t, child(t, m.resources["aws_sfn_state_machine.this"], "logging_configuration"), "include_execution_data"))["var.state_machine_include_execution_data"],
		"var.table_deletion_protection_enabled":    m.refs(attr(t, m.resources["aws_dynamodb_table.this"], "deletion_protection_enabled"))["var.table_deletion_protection_enabled"],
	}
	for v, used := range uses {
		if !used {
			t.Errorf("%s is not what the resource uses", v)
		}
	}
}

// Every function can encrypt its environment with a customer managed key
// and trace with X-Ray, and every log group keeps what log_retention_days
// says, which must be a value CloudWatch Logs accepts.
func TestFunctionsAndLogsAreConfigurable(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	for name := range functions {
		fn := m.resources["aws_lambda_function."+name]
		if !m.refs(attr(t, fn, "kms_key_arn"))["var.lambda_kms_key_arn"] {
			t.Errorf("%s: kms_key_arn is not var.lambda_kms_key_arn", name)
		}
		if !m.refs(attr(t, child(t, fn, "tracing_config"), "mode"))["var.lambda_tracing_mode"] {
			t.Errorf("%s: tracing mode is not var.lambda_tracing_mode", name)
		}
		if _, ok := fn.Body.Attributes["reserved_concurrent_executions"]; !ok {
			t.Errorf("%s: no reserved_concurrent_executions", name)
		}
	}
	groups := 0
	for key, res := range m.resources {
		if strings.HasPrefix(key, "aws_cloudwatch_log_group.") {
			groups++
			if !m.refs(attr(t, res, "retention_in_days"))["var.log_retention_days"] {
				t.Errorf("%s: retention is not var.log_retention_days", key)
			}
		}
	}
	if groups == 0 {
		t.Error("no log groups")
	}
	for days, ok := range map[int64]bool{0: true, 30: true, 365: true, 3653: true, 31: false, -1: false} {
		if got := validates(t, m, "log_retention_days", cty.NumberIntVal(days)); got != ok {
			t.Errorf("log_retention_days = %d accepted %v, want %v", days, got, ok)
		}
	}
}

// validates reports whether every validation of a variable accepts v.
func validates(t *testing.T, m *tfModule, variable string, v cty.Value) bool {
	t.Helper()
	ctx := m.evalContextWith(map[string]cty.Value{variable: v})
	found := false
	for _, b := range m.variables[variable].Body.Blocks {
		if b.Type != "validation" {
			continue
		}
		found = true
		ok, diags := attr(t, b, "condition").Value(ctx)
		if diags.HasErrors() {
			t.Fatalf("var.%s validation: %s", variable, diags.Error())
		}
		if !ok.RawEquals(cty.True) {
			return false
		}
	}
	if !found {
		t.Fatalf("var.%s has no validation", variable)
	}
	return true
}

// grantedStatements returns, by sid, the statements of a policy document
// present when the module's caller sets vars: static ones and the dynamic
// ones whose for_each is not empty.
func grantedStatements(t *testing.T, m *tfModule, doc string, vars map[string]cty.Value) map[string]*hclsyntax.Block {
	t.Helper()
	ctx := m.evalContextWith(vars)
	out := map[string]*hclsyntax.Block{}
	for _, b := range m.data["aws_iam_policy_document."+doc].Body.Blocks {
		switch {
		case b.Type == "statement":
		case b.Type == "dynamic" && b.Labels[0] == "statement":
			each, diags := attr(t, b, "for_each").Value(ctx)
			if diags.HasErrors() || !each.IsWhollyKnown() {
				t.Fatalf("%s: for_each does not evaluate: %s", b.DefRange(), diags.Error())
			}
			if each.LengthInt() == 0 {
				continue
			}
			b = child(t, b, "content")
		default:
			continue
		}
		sid, diags := attr(t, b, "sid").Value(ctx)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		out[sid.AsString()] = b
	}
	return out
}

// The relay's role may read exactly the webhook secret the caller names,
// from the store its ARN names, and decrypt with its key only through that
// store.
func TestWebhookSecretGrant(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	const (
		secret    = "arn:aws:secretsmanager:eu-central-1:123456789012:secret:docpipe/webhook-AbCdEf"
		parameter = "arn:aws:ssm:us-west-2:123456789012:parameter/docpipe/webhook"
		key       = "arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	)
	secretGrants := []string{"WebhookSecret", "WebhookSecretParameter", "WebhookSecretKey"}
	for _, tc := range []struct {
		arn, key string
		want     map[string]string // sid → the one action it grants
		via      string            // kms:ViaService value
	}{
		{arn: "", want: map[string]string{}},
		{arn: "", key: key, want: map[string]string{}},
		{arn: secret, want: map[string]string{"WebhookSecret": "secretsmanager:GetSecretValue"}},
		{arn: parameter, want: map[string]string{"WebhookSecretParameter": "ssm:GetParameter"}},
		{arn: secret, key: key, want: map[string]string{"WebhookSecret": "secretsmanager:GetSecretValue", "WebhookSecretKey": "kms:Decrypt"},
			via: "secretsmanager.eu-central-1.amazonaws.com"},
		{arn: parameter, key: key, want: map[string]string{"WebhookSecretParameter": "ssm:GetParameter", "WebhookSecretKey": "kms:Decrypt"},
			via: "ssm.us-west-2.amazonaws.com"},
	} {
		keyVal := cty.NullVal(cty.String)
		if tc.key != "" {
			keyVal = cty.StringVal(tc.key)
		}
		vars := map[string]cty.Value{"webhook_secret_arn": cty.StringVal(tc.arn), "webhook_secret_kms_key_arn": keyVal}
		ctx := m.evalContextWith(vars)
		got := grantedStatements(t, m, "relay", vars)
		for _, sid := range secretGrants {
			st, present := got[sid]
			action, want := tc.want[sid]
			if present != want {
				t.Errorf("secret %q key %q: statement %s present %v, want %v", tc.arn, tc.key, sid, present, want)
				continue
			}
			if !present {
				continue
			}
			actions, _ := attr(t, st, "actions").Value(ctx)
			resources, _ := attr(t, st, "resources").Value(ctx)
			wantResource := tc.arn
			if sid == "WebhookSecretKey" {
				wantResource = tc.key
			}
			if !actions.RawEquals(cty.TupleVal([]cty.Value{cty.StringVal(action)})) && !actions.RawEquals(cty.ListVal([]cty.Value{cty.StringVal(action)})) {
				t.Errorf("%s grants %#v, want [%s]", sid, actions, action)
			}
			if !resources.RawEquals(cty.TupleVal([]cty.Value{cty.StringVal(wantResource)})) {
				t.Errorf("%s applies to %#v, want [%s]", sid, resources, wantResource)
			}
			if sid == "WebhookSecretKey" {
				cond := child(t, st, "condition")
				variable, _ := attr(t, cond, "variable").Value(ctx)
				values, _ := attr(t, cond, "values").Value(ctx)
				if variable.AsString() != "kms:ViaService" || !values.RawEquals(cty.TupleVal([]cty.Value{cty.StringVal(tc.via)})) {
					t.Errorf("key grant condition %#v = %#v, want kms:ViaService = %s", variable, values, tc.via)
				}
			}
		}
	}

	for arn, ok := range map[string]bool{
		"":        true,
		secret:    true,
		parameter: true,
		"arn:aws-us-gov:ssm:us-gov-west-1:123456789012:parameter/w": true,
		// A partial Secrets Manager ARN would not match the secret's own
		// ARN in the grant.
		"arn:aws:secretsmanager:eu-central-1:123456789012:secret:docpipe/webhook": false,
		"arn:aws:s3:::bucket/webhook":            false,
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw": false,
	} {
		if got := validates(t, m, "webhook_secret_arn", cty.StringVal(arn)); got != ok {
			t.Errorf("webhook_secret_arn = %q accepted %v, want %v", arn, got, ok)
		}
	}
	relayEnv := objectKeys(t, attr(t, child(t, m.resources["aws_lambda_function.relay"], "environment"), "variables"))
	if v, ok := relayEnv["DOCPIPE_WEBHOOK_SECRET_ARN"]; !ok || !m.refs(v)["var.webhook_secret_arn"] {
		t.Error("the relay's DOCPIPE_WEBHOOK_SECRET_ARN is not var.webhook_secret_arn")
	}
}

// Events that reach neither ingest nor relay land in the dead-letter queue:
// those EventBridge gives up delivering, and asynchronous invocations that
// still fail after Lambda's retries.
func TestDeadLetters(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	const queue = "aws_sqs_queue.dead_letter"
	q, ok := m.resources[queue]
	if !ok {
		t.Fatalf("no %s", queue)
	}
	if v := m.eval(t, attr(t, q, "sqs_managed_sse_enabled")); !v.RawEquals(cty.True) {
		t.Errorf("the dead-letter queue is not encrypted: sqs_managed_sse_enabled %#v", v)
	}
	for _, fn := range []string{"ingest", "relay"} {
		res := m.resources["aws_lambda_function."+fn]
		if !m.refs(attr(t, child(t, res, "dead_letter_config"), "target_arn"))[queue] {
			t.Errorf("%s's dead-letter target is not the queue", fn)
		}
	}
	rules := []string{"upload", "execution_failed"}
	for _, rule := range rules {
		target := m.resources["aws_cloudwatch_event_target."+rule]
		if !m.refs(attr(t, child(t, target, "dead_letter_config"), "arn"))[queue] {
			t.Errorf("the %s target's dead-letter queue is not the queue", rule)
		}
	}
	sts := policyDocument(t, m, m.resources["aws_sqs_queue_policy.dead_letter"], "policy")
	if len(sts) != 1 || !slices.Equal(sts[0].actions, []string{"sqs:SendMessage"}) || !m.refs(sts[0].resources)[queue] {
		t.Fatalf("queue policy %+v: want one statement granting sqs:SendMessage on the queue", sts)
	}
	var principal, sources bool
	for _, c := range sts[0].block.Body.Blocks {
		switch c.Type {
		case "principals":
			principal = slices.Equal(m.strs(t, attr(t, c, "identifiers")), []string{"events.amazonaws.com"})
		case "condition":
			refs := m.refs(attr(t, c, "values"))
			sources = m.str(t, attr(t, c, "variable")) == "aws:SourceArn" &&
				refs["aws_cloudwatch_event_rule.upload"] && refs["aws_cloudwatch_event_rule.execution_failed"]
		}
	}
	if !principal || !sources {
		t.Errorf("queue policy: EventBridge principal %v, limited to the rules' ARNs %v; want both", principal, sources)
	}
}

var checkovSkip = regexp.MustCompile(`^#checkov:skip=(CKV2?_AWS_\d+):(.+)$`)

// Every check the scanner skips says why, in a form it reads.
func TestCheckovSkipsAreExplained(t *testing.T) {
	t.Parallel()
	skips := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".tf" {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			line = strings.TrimSpace(line)
			if !strings.Contains(line, "checkov:skip") {
				continue
			}
			skips++
			match := checkovSkip.FindStringSubmatch(line)
			if match == nil || len(strings.Fields(match[2])) < 5 {
				t.Errorf("%s:%d: want #checkov:skip=CKV_AWS_<n>:<the reason, in a sentence>", path, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if skips == 0 {
		t.Error("no checkov:skip found; the scan is broken")
	}
}
