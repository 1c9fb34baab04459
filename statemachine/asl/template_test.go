package asl

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestTemplateParsesOnce(t *testing.T) {
	t.Parallel()
	const src = `{"b": {"c.$": "$.x", "n": [1, {"d.$": "States.Format('{}', $.y)"}]}, "a": "s", "ctx.$": "$$.Map.Item.Value"}`
	var tpl Template
	if err := json.Unmarshal([]byte(src), &tpl); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range tpl.Fields {
		keys = append(keys, f.Key)
	}
	if tpl.Kind != TemplateObject || !slices.Equal(keys, []string{"a", "b", "ctx.$"}) {
		t.Fatalf("fields = %q (kind %d)", keys, tpl.Kind)
	}
	if a := tpl.Field("a"); a.Dynamic() || a.Value.Kind != TemplateValue || a.Value.Value != "s" {
		t.Errorf("a = %+v", a.Value)
	}
	ctx := tpl.Field("ctx.$")
	if ctx.Name() != "ctx" || ctx.Value.Kind != TemplateExpr || !ctx.Value.Expr.Path.Context {
		t.Errorf("ctx.$ = %+v", ctx.Value)
	}
	n := tpl.Field("b").Value.Field("n").Value
	if n.Kind != TemplateArray || n.Elems[0].Value != 1.0 {
		t.Fatalf("n = %+v", n)
	}
	if call := n.Elems[1].Field("d.$").Value.Expr.Call; call == nil || call.Name != "States.Format" || call.Args[1].Path.Raw != "$.y" {
		t.Errorf("d.$ call = %+v", call)
	}
	b, err := json.Marshal(&tpl)
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	_ = json.Unmarshal(b, &got)
	_ = json.Unmarshal([]byte(src), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip = %s", b)
	}
}

func TestTemplateConstructorsMarshal(t *testing.T) {
	t.Parallel()
	tpl := Object(Field("step", "x"), DynamicField("workflow", "$.workflow"), NestedField("p", Array(Value(1), Object())))
	b, err := json.Marshal(tpl)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"step":"x","workflow.$":"$.workflow","p":[1,{}]}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// Paths, expressions and timestamps that do not parse are not Parse
// errors: Validate reports each where it sits, with the others.
func TestValidateLocatesMalformedFields(t *testing.T) {
	t.Parallel()
	got := problems(t, `{"StartAt":"W","States":{
	  "W":{"Type":"Wait","TimestampPath":"$.a[*]","Next":"T"},
	  "T":{"Type":"Wait","Timestamp":"2024-01-01t00:00:00z","Next":"C"},
	  "C":{"Type":"Choice","Choices":[{"Variable":"$..x","StringEqualsPath":"nope","Next":"M"}]},
	  "M":{"Type":"Map","ItemsPath":"items","OutputPath":"$$.Execution","ResultPath":"$$.x","Next":"F",
	    "ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"a":{"b.$":"$["}},"End":true}}}},
	  "F":{"Type":"Fail","CausePath":"States.Nope()"}}}`)
	want := []string{
		`States.W.TimestampPath: reference path "$.a[*]" must not contain wildcards`,
		`States.T.Timestamp: timestamp "2024-01-01t00:00:00z" must use upper-case T and Z`,
		`States.C.Choices[0].Variable: path "$..x": deep scan (..) is not supported`,
		`States.C.Choices[0].StringEqualsPath: path "nope" must start with $`,
		`States.M.ResultPath: path "$$.x" may not refer to the context object`,
		`States.M.ItemsPath: path "items" must start with $`,
		`States.M.ItemProcessor.States.P.Parameters.a.b.$: path "$[": unterminated [`,
		`States.F.CausePath: intrinsic "States.Nope()": unknown function "States.Nope"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n  %q\nwant\n  %q", got, want)
	}
}

func TestValidateRejectsExpressionUnderStaticKey(t *testing.T) {
	t.Parallel()
	sm := &StateMachine{StartAt: "P"}
	sm.States.Add("P", &Pass{Flow: Flow{End: true}, Parameters: Object(NestedField("x", &Template{Kind: TemplateExpr, Expr: NewExpr("$.a")}))})
	var ve *ValidationError
	err := Validate(sm)
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].String() != "States.P.Parameters.x: an expression needs a field name ending in .$" {
		t.Errorf("Validate = %v", err)
	}
}
