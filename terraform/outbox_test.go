package terraform_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/table"
)

// The relay's event source mapping passes exactly the records cmd/relay
// acts on: inserted or changed items whose sort key is an outbox event and
// which are still in the pending index.
func TestRelayStreamFilterMatchesOutboxKeys(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	esm, ok := m.resources["aws_lambda_event_source_mapping.relay"]
	if !ok {
		t.Fatal("no aws_lambda_event_source_mapping.relay")
	}
	if got := fullTraversal(t, attr(t, esm, "event_source_arn")); got != "aws_dynamodb_table.this.stream_arn" {
		t.Error("the relay's mapping does not read the table's stream")
	}
	if got := fullTraversal(t, attr(t, esm, "function_name")); !strings.HasPrefix(got, "aws_lambda_function.relay.") {
		t.Error("the relay's mapping does not invoke the relay function")
	}
	call, ok := attr(t, child(t, child(t, esm, "filter_criteria"), "filter"), "pattern").(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "jsonencode" || len(call.Args) != 1 {
		t.Fatal("filter pattern is not jsonencode({...})")
	}
	p := m.eval(t, call.Args[0])
	if got := patternStrings(t, p, "eventName"); !slices.Equal(got, []string{"INSERT", "MODIFY"}) {
		t.Errorf("eventName %v, want INSERT and MODIFY", got)
	}
	prefix := func(attrName string) string {
		img := p.GetAttr("dynamodb").GetAttr("NewImage")
		if !img.Type().HasAttribute(attrName) {
			t.Fatalf("the pattern does not filter on NewImage.%s", attrName)
		}
		v := img.GetAttr(attrName).GetAttr("S").Index(cty.NumberIntVal(0)).GetAttr("prefix")
		return v.AsString()
	}
	if got := prefix(table.AttrSK); got != pipeline.PrefixEvent {
		t.Errorf("SK prefix %q, want %q", got, pipeline.PrefixEvent)
	}
	pending := strings.TrimSuffix(pipeline.OutboxIndexPK(pipeline.DeliveryPending, 0), "0")
	if got := prefix(table.AttrGSI1PK); got != pending {
		t.Errorf("GSI1PK prefix %q, want %q", got, pending)
	}
}

// The sweep schedule invokes the relay with the event cmd/relay knows as a
// sweep.
func TestRelaySweepScheduleReachesRelay(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	rule, ok := m.resources["aws_cloudwatch_event_rule.relay_sweep"]
	if !ok {
		t.Fatal("no aws_cloudwatch_event_rule.relay_sweep")
	}
	if got := m.str(t, attr(t, rule, "schedule_expression")); got != "rate(5 minutes)" {
		t.Errorf("sweep schedule %q by default, want rate(5 minutes)", got)
	}
	consts := goStringConsts(t, filepath.Join(repoRoot, "cmd/internal/relayfn"))
	if consts["sourceScheduler"] != "aws.events" || consts["detailScheduledEvent"] != "Scheduled Event" {
		t.Errorf("the relay handler's sweep event is %q/%q, not what EventBridge schedules send", consts["sourceScheduler"], consts["detailScheduledEvent"])
	}
	var target, permission bool
	for key, res := range m.resources {
		switch {
		case strings.HasPrefix(key, "aws_cloudwatch_event_target."):
			if m.refs(attr(t, res, "rule"))["aws_cloudwatch_event_rule.relay_sweep"] {
				target = m.refs(attr(t, res, "arn"))["aws_lambda_function.relay"]
			}
		case strings.HasPrefix(key, "aws_lambda_permission."):
			if m.refs(attr(t, res, "source_arn"))["aws_cloudwatch_event_rule.relay_sweep"] {
				permission = m.refs(attr(t, res, "function_name"))["aws_lambda_function.relay"] &&
					m.str(t, attr(t, res, "principal")) == "events.amazonaws.com"
			}
		}
	}
	if !target || !permission {
		t.Errorf("sweep: target to relay %v, permission for EventBridge %v; want both", target, permission)
	}
	for _, v := range []string{"webhook_url"} {
		if s, ok := m.variables[v].Body.Attributes["sensitive"]; !ok || !m.eval(t, s.Expr).RawEquals(cty.True) {
			t.Errorf("var.%s is not sensitive", v)
		}
	}
}

// fullTraversal spells out a plain reference with every attribute step.
func fullTraversal(t *testing.T, expr hclsyntax.Expression) string {
	t.Helper()
	st, ok := expr.(*hclsyntax.ScopeTraversalExpr)
	if !ok {
		t.Fatalf("%s: want a plain reference", expr.Range())
	}
	parts := []string{st.Traversal.RootName()}
	for _, step := range st.Traversal[1:] {
		if a, ok := step.(hcl.TraverseAttr); ok {
			parts = append(parts, a.Name)
		}
	}
	return strings.Join(parts, ".")
}
