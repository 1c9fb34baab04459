package table_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	type payload struct {
		A int       `json:"a"`
		T time.Time `json:"t"`
	}
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	n := 5
	cases := []struct {
		in, want any
	}{
		{nil, nil},
		{"s", "s"},
		{true, true},
		{3, 3.0},
		{int8(-3), -3.0},
		{uint64(7), 7.0},
		{float32(1.5), 1.5},
		{json.Number("12.5"), 12.5},
		{&n, 5.0},
		{(*int)(nil), nil},
		{[]string{"a"}, []any{"a"}},
		{[]int{1, 2}, []any{1.0, 2.0}},
		{[2]bool{true, false}, []any{true, false}},
		{map[string]int{"x": 1}, map[string]any{"x": 1.0}},
		{map[string]any{"n": map[string][]int{"l": {4}}}, map[string]any{"n": map[string]any{"l": []any{4.0}}}},
		{table.Item{"PK": "p"}, map[string]any{"PK": "p"}},
		{map[string]any(nil), nil},
		{[]any(nil), nil},
		{payload{A: 2, T: when}, map[string]any{"a": 2.0, "t": "2024-05-06T07:08:09Z"}},
		{[]byte("hi"), "aGk="},
	}
	for _, c := range cases {
		got, err := table.NormalizeValue(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("NormalizeValue(%#v) = %#v, %v; want %#v", c.in, got, err, c.want)
		}
		if got := table.Normalize(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Normalize(%#v) = %#v", c.in, got)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), make(chan int), map[string]any{"f": func() {}}, []any{math.Inf(-1)}} {
		if _, err := table.NormalizeValue(bad); !errors.Is(err, table.ErrInvalidUpdate) {
			t.Errorf("NormalizeValue(%T): err = %v, want ErrInvalidUpdate", bad, err)
		}
		if got := table.Normalize(bad); got != nil {
			t.Errorf("Normalize(%T) = %v, want nil", bad, got)
		}
	}
}

func sample() table.Item {
	return table.Item{
		"PK": "p", "SK": "s",
		"data": map[string]any{
			"status": "pending", "n": 2.0, "list": []any{"a", 1.0},
			"steps": map[string]any{"ocr": map[string]any{"status": "failed"}},
		},
	}
}

func TestEval(t *testing.T) {
	t.Parallel()
	it := sample()
	cases := []struct {
		name string
		cond table.Cond
		want bool
	}{
		{"nil", nil, true},
		{"exists", table.Exists{Path: "data.steps.ocr.status"}, true},
		{"exists through scalar", table.Exists{Path: "data.n.x"}, false},
		{"exists through list", table.Exists{Path: "data.list.0"}, false},
		{"not exists", table.NotExists{Path: "data.x"}, true},
		{"equals int", table.Equals{Path: "data.n", Value: 2}, true},
		{"equals list", table.Equals{Path: "data.list", Value: []any{"a", 1}}, true},
		{"equals nil absent", table.Equals{Path: "data.x", Value: nil}, false},
		{"not equals absent", table.NotEquals{Path: "data.x", Value: 1}, true},
		{"in", table.In{Path: "data.steps.ocr.status", Values: []any{"pending", "failed"}}, true},
		{"in miss", table.In{Path: "data.status", Values: []any{"failed"}}, false},
		{"less", table.LessThan{Path: "data.n", Value: 2.5}, true},
		{"less on string", table.LessThan{Path: "data.status", Value: 100}, false},
		{"empty and", table.And{}, true},
		{"empty or", table.Or{}, false},
		{"not", table.Not{Cond: table.Equals{Path: "data.status", Value: "pending"}}, false},
	}
	for _, c := range cases {
		got, err := table.Eval(c.cond, it)
		if err != nil || got != c.want {
			t.Errorf("%s: Eval = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	// A missing item: everything is absent.
	if ok, _ := table.Eval(table.NotExists{Path: table.AttrPK}, nil); !ok {
		t.Error("NotExists on a nil item does not hold")
	}
	if ok, _ := table.Eval(table.Exists{Path: "data"}, nil); ok {
		t.Error("Exists on a nil item holds")
	}
	for _, bad := range []table.Cond{
		table.Exists{Path: ""}, table.Equals{Path: "a..b", Value: 1}, table.In{Path: "data.status"},
		table.Equals{Path: "data.n", Value: math.NaN()}, table.And{table.Exists{Path: "."}}, table.Or{table.In{Path: "x"}},
	} {
		if _, err := table.Eval(bad, it); !errors.Is(err, table.ErrInvalidUpdate) {
			t.Errorf("Eval(%#v): err = %v, want ErrInvalidUpdate", bad, err)
		}
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	it := sample()
	got, err := table.Apply(it, []table.Update{
		table.Set{Path: "data.steps.ocr.status", Value: "completed"},
		table.Set{Path: "data.steps.graph", Value: map[string]int{"tries": 1}},
		table.Add{Path: "data.n", Delta: 3},
		table.Add{Path: "data.fresh", Delta: 1},
		table.Remove{Path: "data.list"},
		table.Remove{Path: "data.none.deeper"},
		table.Set{Path: "GSI1PK", Value: "g"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := table.Item{
		"PK": "p", "SK": "s", "GSI1PK": "g",
		"data": map[string]any{
			"status": "pending", "n": 5.0, "fresh": 1.0,
			"steps": map[string]any{"ocr": map[string]any{"status": "completed"}, "graph": map[string]any{"tries": 1.0}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Apply = %#v\nwant %#v", got, want)
	}
	if !reflect.DeepEqual(it, sample()) {
		t.Fatalf("Apply changed its input: %#v", it)
	}
	// Upsert base: Apply on a nil item starts from nothing.
	if got, err := table.Apply(nil, []table.Update{table.Add{Path: "n", Delta: 2}}); err != nil || got["n"] != 2.0 {
		t.Fatalf("Apply(nil) = %v, %v", got, err)
	}

	for name, bad := range map[string][]table.Update{
		"missing parent":   {table.Set{Path: "data.x.y", Value: 1}},
		"scalar parent":    {table.Set{Path: "data.n.y", Value: 1}},
		"add to string":    {table.Add{Path: "data.status", Delta: 1}},
		"add NaN":          {table.Add{Path: "data.n", Delta: math.NaN()}},
		"same path twice":  {table.Set{Path: "data.n", Value: 1}, table.Remove{Path: "data.n"}},
		"parent and child": {table.Remove{Path: "data.steps"}, table.Set{Path: "data.steps.ocr", Value: 1}},
		"child and parent": {table.Set{Path: "data.steps.ocr", Value: 1}, table.Remove{Path: "data"}},
		"change PK":        {table.Set{Path: "PK", Value: "q"}},
		"remove SK":        {table.Remove{Path: "SK"}},
		"empty path":       {table.Set{Path: "", Value: 1}},
		"bad value":        {table.Set{Path: "x", Value: make(chan int)}},
		"nil update":       {nil},
	} {
		if _, err := table.Apply(it, bad); !errors.Is(err, table.ErrInvalidUpdate) {
			t.Errorf("%s: err = %v, want ErrInvalidUpdate", name, err)
		}
	}
	// Sibling paths sharing a prefix string are not overlapping.
	if _, err := table.Apply(it, []table.Update{table.Set{Path: "data.n", Value: 1}, table.Set{Path: "data.nn", Value: 2}}); err != nil {
		t.Fatalf("sibling paths: %v", err)
	}
}

func TestLookupAndDeepCopy(t *testing.T) {
	t.Parallel()
	it := sample()
	if v, ok := table.Lookup(it, "data.steps.ocr.status"); !ok || v != "failed" {
		t.Fatalf("Lookup = %v, %v", v, ok)
	}
	cp := table.DeepCopy(it)
	cp.Data()["steps"].(map[string]any)["ocr"].(map[string]any)["status"] = "x"
	cp.Data()["list"].([]any)[0] = "z"
	if !reflect.DeepEqual(it, sample()) {
		t.Fatal("DeepCopy shares state with its source")
	}
	if table.DeepCopy(nil) != nil {
		t.Fatal("DeepCopy(nil) != nil")
	}
}

// Apply copies only the maps on the paths it changes: the base item is
// left exactly as it was, however deep the updates go, and a second Apply
// on the result does not reach back into the first one's base either.
func TestApplyLeavesTheBaseAlone(t *testing.T) {
	t.Parallel()
	base := table.Item{
		"PK": "wf", "SK": "STEP",
		"data": map[string]any{
			"status": "in_progress", "n": 1.0,
			"steps": map[string]any{
				"ocr":   map[string]any{"status": "pending", "error": "x"},
				"parse": map[string]any{"status": "completed"},
			},
		},
	}
	before := table.DeepCopy(base)
	after, err := table.Apply(base, []table.Update{
		table.Set{Path: "data.steps.ocr.status", Value: "in_progress"},
		table.Remove{Path: "data.steps.ocr.error"},
		table.Add{Path: "data.n", Delta: 2},
		table.Set{Path: "data.steps.new", Value: map[string]any{"status": "pending"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(base, before) {
		t.Fatalf("Apply changed its base:\n%v\nwas\n%v", base, before)
	}
	again, err := table.Apply(after, []table.Update{table.Set{Path: "data.steps.parse.status", Value: "failed"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(base, before) {
		t.Fatalf("a second Apply changed the first one's base: %v", base)
	}
	steps := func(it table.Item, step string) any {
		return it["data"].(map[string]any)["steps"].(map[string]any)[step].(map[string]any)["status"]
	}
	if steps(after, "ocr") != "in_progress" || steps(after, "parse") != "completed" || steps(again, "parse") != "failed" || steps(after, "new") != "pending" {
		t.Errorf("results: %v, then %v", after, again)
	}
	if n := after["data"].(map[string]any)["n"]; n != 3.0 {
		t.Errorf("n = %v, want 3", n)
	}
}
