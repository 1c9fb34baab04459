package asl

import (
	"strings"
	"testing"
)

func TestParseIntrinsicNested(t *testing.T) {
	t.Parallel()
	c, err := ParseIntrinsic(`States.Format('a \{\} {} it\'s \\ {}', States.ArrayLength($.items[*]), $['k, with comma'] , -1.5e2, true, null)`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "States.Format" || len(c.Args) != 6 {
		t.Fatalf("call = %+v", c)
	}
	if a := c.Args[0]; a.Value != `a {} {} it's \ {}` || a.Raw != `a \{\} {} it's \\ {}` {
		t.Errorf("literal value %q raw %q", a.Value, a.Raw)
	}
	if a := c.Args[1]; a.Kind != ArgCall || a.Call.Name != "States.ArrayLength" || a.Call.Args[0].Path.Raw != "$.items[*]" {
		t.Errorf("nested call = %+v", a)
	}
	if a := c.Args[2]; a.Kind != ArgPath || a.Path.Steps[0].Field != "k, with comma" {
		t.Errorf("quoted path arg = %+v", a)
	}
	if c.Args[3].Value != -150.0 || c.Args[4].Value != true || c.Args[5].Kind != ArgLiteral || c.Args[5].Value != nil {
		t.Errorf("literals = %+v", c.Args[3:])
	}
	if u, err := ParseIntrinsic("States.UUID()"); err != nil || len(u.Args) != 0 {
		t.Errorf("States.UUID() = %+v, %v", u, err)
	}
}

func TestParseIntrinsicErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"States.Nope()":                   "unknown function",
		"States.UUID(1)":                  "takes 0 arguments",
		"States.MathRandom(1)":            "takes 2 to 3 arguments",
		"States.Format()":                 "at least 1",
		"States.Format('x'":               "unterminated call",
		"States.Format('x)":               "unterminated string",
		"States.Format('\\n')":            "invalid escape",
		"States.Format('x' 'y')":          "expected , or )",
		"States.Format('x') trailing":     "unexpected text",
		"States.Format('x', $.a..b)":      "deep scan",
		"States.Format('x', @)":           "unexpected",
		"States.ArrayLength":              "expected (",
		"States.Format('x', 1.2.3)":       "bad number",
		"States.Format('x', truex)":       "unexpected",
		"States.Array(States.Bogus())":    "unknown function",
		"States.JsonMerge($.a, $.b)":      "takes 3 arguments",
		"States.Format('{}', States.UUID": "expected ( after States.UUID",
	} {
		if _, err := ParseIntrinsic(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseIntrinsic(%q) error = %v, want %q", in, err, want)
		}
	}
}
