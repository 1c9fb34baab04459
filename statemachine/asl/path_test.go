package asl

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		context bool
		steps   []Step
	}{
		{"$", false, nil},
		{"$$", true, nil},
		{"$.a.b", false, []Step{{Kind: StepField, Field: "a"}, {Kind: StepField, Field: "b"}}},
		{"$.a[0]", false, []Step{{Kind: StepField, Field: "a"}, {Kind: StepIndex, Index: 0}}},
		{"$['odd key']['it\\'s']", false, []Step{{Kind: StepField, Field: "odd key"}, {Kind: StepField, Field: "it's"}}},
		{`$["dq"][12]`, false, []Step{{Kind: StepField, Field: "dq"}, {Kind: StepIndex, Index: 12}}},
		{"$.a[*].b", false, []Step{{Kind: StepField, Field: "a"}, {Kind: StepWildcard}, {Kind: StepField, Field: "b"}}},
		{"$.a.*", false, []Step{{Kind: StepField, Field: "a"}, {Kind: StepWildcard}}},
		{"$$.Map.Item.Value", true, []Step{{Kind: StepField, Field: "Map"}, {Kind: StepField, Field: "Item"}, {Kind: StepField, Field: "Value"}}},
		{"$.with-dash_and$dollar", false, []Step{{Kind: StepField, Field: "with-dash_and$dollar"}}},
	} {
		p, err := ParsePath(tc.in)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", tc.in, err)
			continue
		}
		if p.Context != tc.context || !reflect.DeepEqual(p.Steps, tc.steps) || p.String() != tc.in {
			t.Errorf("ParsePath(%q) = %+v", tc.in, p)
		}
	}
}

func TestParsePathErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":            "must start with $",
		"a.b":         "must start with $",
		"$.":          "empty member name",
		"$..a":        "deep scan",
		"$.a[?(@.x)]": "only integer indices",
		"$.a[1:2]":    "only integer indices",
		"$.a[":        "unterminated [",
		"$['a":        "unterminated string",
		"$['a'x":      "expected ]",
		"$.a b":       "unexpected",
		"$x":          "unexpected",
		"$.a]":        "unexpected",
	} {
		if _, err := ParsePath(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePath(%q) error = %v, want %q", in, err, want)
		}
	}
	if _, err := ParseReferencePath("$.a[*]"); err == nil {
		t.Error("reference path accepted a wildcard")
	}
}
