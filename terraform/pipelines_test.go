package terraform_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"go.yaml.in/yaml/v3"
)

// pipelineFunctions are the Terraform functions local.pipeline_lambda_arns
// uses: file and yamldecode as Terraform defines them, for these files.
var pipelineFunctions = map[string]function.Function{
	"sort":     stdlib.SortFunc,
	"distinct": stdlib.DistinctFunc,
	"flatten":  stdlib.FlattenFunc,
	"can":      tryfunc.CanFunc,
	"file": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			b, err := os.ReadFile(args[0].AsString())
			return cty.StringVal(string(b)), err
		},
	}),
	"yamldecode": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "src", Type: cty.String}},
		Type:   function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			var v any
			if err := yaml.Unmarshal([]byte(args[0].AsString()), &v); err != nil {
				return cty.NilVal, err
			}
			b, err := json.Marshal(v)
			if err != nil {
				return cty.NilVal, err
			}
			typ, err := ctyjson.ImpliedType(b)
			if err != nil {
				return cty.NilVal, err
			}
			return ctyjson.Unmarshal(b, typ)
		},
	}),
}

// pipelineLambdaARNs evaluates local.pipeline_lambda_arns with
// var.pipeline_files set to files.
func pipelineLambdaARNs(t *testing.T, m *tfModule, files []string) []string {
	t.Helper()
	expr, ok := m.locals["pipeline_lambda_arns"]
	if !ok {
		t.Fatal("no local.pipeline_lambda_arns")
	}
	list := cty.ListValEmpty(cty.String)
	if len(files) > 0 {
		var vals []cty.Value
		for _, f := range files {
			vals = append(vals, cty.StringVal(f))
		}
		list = cty.ListVal(vals)
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{"pipeline_files": list})},
		Functions: pipelineFunctions,
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		t.Fatalf("local.pipeline_lambda_arns: %v", diags)
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		out = append(out, e.AsString())
	}
	return out
}

// The steps function may invoke exactly the Lambda functions the pipeline
// files name as stages, each once, and none without pipeline files; the
// grant is its own statement, present only when there is something to
// grant.
func TestPipelineLambdaGrant(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	files, err := filepath.Glob(filepath.Join("testdata", "pipelines", "*.yaml"))
	if err != nil || len(files) != 2 {
		t.Fatalf("testdata pipelines: %v, %v", files, err)
	}
	want := []string{
		"arn:aws:lambda:us-east-1:123456789012:function:classify",
		"arn:aws:lambda:us-east-1:123456789012:function:tag:live",
	}
	if got := pipelineLambdaARNs(t, m, files); !slices.Equal(got, want) {
		t.Errorf("with %v: %v, want %v", files, got, want)
	}
	if got := pipelineLambdaARNs(t, m, nil); len(got) != 0 {
		t.Errorf("without pipeline files: %v, want none", got)
	}

	var grants int
	doc, ok := m.data["aws_iam_policy_document.steps"]
	if !ok {
		t.Fatal("no data.aws_iam_policy_document.steps")
	}
	for _, dyn := range doc.Body.Blocks {
		if dyn.Type != "dynamic" || len(dyn.Labels) != 1 || dyn.Labels[0] != "statement" {
			continue
		}
		forEach, ok := dyn.Body.Attributes["for_each"]
		if !ok {
			continue
		}
		for _, content := range dyn.Body.Blocks {
			res, ok := content.Body.Attributes["resources"]
			if !ok || !m.refs(res.Expr)["local.pipeline_lambda_arns"] {
				continue
			}
			grants++
			if !m.refs(forEach.Expr)["local.pipeline_lambda_arns"] {
				t.Error("the Lambda stage grant is not conditional on there being Lambda stages")
			}
			if refs := m.refs(res.Expr); len(refs) != 2 || !refs["var.pipeline_files"] {
				t.Errorf("the Lambda stage grant applies to %v, want local.pipeline_lambda_arns alone", sortedKeys(refs))
			}
		}
	}
	if grants != 1 {
		t.Errorf("%d statements grant the pipelines' Lambda functions, want 1", grants)
	}
}
