package dynamotable

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/docpipe/docpipe/pipeline/table"
)

// render builds a condition and returns its expression with the names
// substituted back, which is easier to read in a test than "#0.#1".
func render(t *testing.T, cb expression.ConditionBuilder) string {
	t.Helper()
	expr, err := expression.NewBuilder().WithCondition(cb).Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return unalias(*expr.Condition(), expr.Names())
}

func unalias(s string, names map[string]string) string {
	// Longest aliases first so "#10" is not read as "#1" + "0".
	for i := len(names) + 10; i >= 0; i-- {
		for alias, n := range names {
			if alias == "#"+itoa(i) {
				s = strings.ReplaceAll(s, alias, n)
			}
		}
	}
	return s
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestBuildCond(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cond table.Cond
		want string // rendered; "" for kTrue, "FALSE" for kFalse
	}{
		{"exists nested", table.Exists{Path: "data.steps.ocr"}, "attribute_exists (data.steps.ocr)"},
		{"not exists", table.NotExists{Path: table.AttrPK}, "attribute_not_exists (PK)"},
		{"equals", table.Equals{Path: "data.status", Value: "done"}, "data.status = :0"},
		{"not equals spells out absence", table.NotEquals{Path: "a", Value: 1}, "(attribute_not_exists (a)) OR (a <> :0)"},
		{"in", table.In{Path: "s", Values: []any{"a", "b"}}, "s IN (:0, :1)"},
		{"less than needs a number", table.LessThan{Path: "n", Value: 3}, "(attribute_type (n, :0)) AND (n < :1)"},
		{"bracket is not an index", table.Exists{Path: "data.a[1]"}, "attribute_exists (data.a[1])"},
		{"empty and holds", table.And{}, ""},
		{"empty or fails", table.Or{}, "FALSE"},
		{"not nil fails", table.Not{}, "FALSE"},
		{"and drops true", table.And{nil, table.Exists{Path: "a"}}, "attribute_exists (a)"},
		{"or absorbs true", table.Or{table.Exists{Path: "a"}, nil}, ""},
		{"and absorbs false", table.And{table.Exists{Path: "a"}, table.Or{}}, "FALSE"},
		{"not", table.Not{Cond: table.Exists{Path: "a"}}, "NOT (attribute_exists (a))"},
		{"and of two", table.And{table.Exists{Path: "a"}, table.NotExists{Path: "b"}}, "(attribute_exists (a)) AND (attribute_not_exists (b))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n, err := buildCond(tt.cond)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			switch n.konst {
			case kTrue:
			case kFalse:
				got = "FALSE"
			default:
				got = render(t, n.b)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBuildCondSplitsLongIn(t *testing.T) {
	t.Parallel()
	vals := make([]any, 2*maxInOperands+1)
	for i := range vals {
		vals[i] = float64(i)
	}
	n, err := buildCond(table.In{Path: "x", Values: vals})
	if err != nil {
		t.Fatal(err)
	}
	got := render(t, n.b)
	if c := strings.Count(got, " IN "); c != 3 {
		t.Errorf("%d IN clauses, want 3: %.80s...", c, got)
	}
}

func TestBuildCondRejects(t *testing.T) {
	t.Parallel()
	for _, c := range []table.Cond{
		table.Exists{Path: ""},
		table.Exists{Path: "a..b"},
		table.In{Path: "a"},
		table.Equals{Path: "a", Value: math.NaN()},
		table.LessThan{Path: "a", Value: math.Inf(1)},
		table.And{table.Exists{Path: "ok"}, table.NotExists{Path: "bad."}},
		table.Or{nil, table.Exists{Path: ".bad"}}, // checked even after the Or is settled
	} {
		if _, err := buildCond(c); !errors.Is(err, table.ErrInvalidUpdate) {
			t.Errorf("buildCond(%#v) = %v, want ErrInvalidUpdate", c, err)
		}
	}
}

func TestWriteCondHidesExpiredItems(t *testing.T) {
	t.Parallel()
	const now = 1_700_000_000
	tests := []struct {
		name string
		cond table.Cond
		need bool
		want string // "" when no condition is sent
	}{
		{"nil", nil, false, ""},
		{"nil in a check", nil, true, "(attribute_exists (PK)) OR (attribute_not_exists (PK))"},
		{"holds when missing: also holds when expired", table.NotExists{Path: table.AttrPK}, false,
			"(attribute_not_exists (PK)) OR ((attribute_type (ttl, :0)) AND (ttl <= :1))"},
		{"needs the item: needs it live", table.Exists{Path: "a"}, false,
			"(attribute_exists (a)) AND (NOT ((attribute_type (ttl, :0)) AND (ttl <= :1)))"},
		{"constant false", table.Or{}, false, "(attribute_exists (PK)) AND (attribute_not_exists (PK))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cb, ok, err := writeCond(tt.cond, now, tt.need)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if ok {
				got = render(t, cb)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestBuildUpdate(t *testing.T) {
	t.Parallel()
	ub, guards, err := buildUpdate([]table.Update{
		table.Set{Path: "data.status", Value: "done"},
		table.Add{Path: "data.segments_done", Delta: 2},
		table.Remove{Path: table.AttrGSI1PK},
		table.Remove{Path: "data.steps.ocr.error"}, // a Remove below a missing parent is a no-op: no guard
		table.Set{Path: "data.steps.ocr.status", Value: "done"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, g := range guards {
		rendered = append(rendered, render(t, g))
	}
	wantGuards := []string{
		"attribute_type (data, :0)",
		"(attribute_not_exists (data.segments_done)) OR (attribute_type (data.segments_done, :0))",
		"attribute_type (data.steps.ocr, :0)",
	}
	if !reflect.DeepEqual(rendered, wantGuards) {
		t.Errorf("guards\n got %q\nwant %q", rendered, wantGuards)
	}
	expr, err := expression.NewBuilder().WithUpdate(ub).Build()
	if err != nil {
		t.Fatal(err)
	}
	got := unalias(*expr.Update(), expr.Names())
	for _, want := range []string{
		"data.status = :",
		"data.segments_done = if_not_exists(data.segments_done, :",
		"REMOVE GSI1PK",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("update %q lacks %q", got, want)
		}
	}
}

func TestBuildUpdateRejects(t *testing.T) {
	t.Parallel()
	for name, ups := range map[string][]table.Update{
		"key attribute":    {table.Set{Path: table.AttrSK, Value: "x"}},
		"nested key":       {table.Remove{Path: "PK.x"}},
		"overlap":          {table.Set{Path: "data.steps", Value: map[string]any{}}, table.Set{Path: "data.steps.ocr", Value: "x"}},
		"same path":        {table.Add{Path: "n", Delta: 1}, table.Add{Path: "n", Delta: 1}},
		"nan delta":        {table.Add{Path: "n", Delta: math.NaN()}},
		"index not string": {table.Set{Path: table.AttrGSI1PK, Value: 3}},
		"index empty":      {table.Set{Path: table.AttrGSI2SK, Value: ""}},
		"add to index":     {table.Add{Path: table.AttrGSI1SK, Delta: 1}},
		"bad value":        {table.Set{Path: "x", Value: make(chan int)}},
		"empty segment":    {table.Remove{Path: "data."}},
		"unknown update":   {nil},
	} {
		if _, _, err := buildUpdate(ups); !errors.Is(err, table.ErrInvalidUpdate) {
			t.Errorf("%s: got %v, want ErrInvalidUpdate", name, err)
		}
	}
}
