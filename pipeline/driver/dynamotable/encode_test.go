package dynamotable

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/docpipe/docpipe/pipeline/table"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	type step struct {
		Status string `json:"status"`
		Tries  int    `json:"tries"`
	}
	item := table.Item{
		table.AttrPK: "WF#1", table.AttrSK: "STEP",
		table.AttrGSI1PK: "STEP#ANALYSIS_STATUS#3",
		table.AttrTTL:    int64(1_700_000_000),
		"data": map[string]any{
			"segments_done": 3,
			"ratio":         0.25,
			"ok":            true,
			"none":          nil,
			"empty":         "",
			"list":          []any{"a", 1, []any{}, map[string]any{}},
			"strings":       []string{"x", "y"}, // a list, not a string set
			"step":          step{Status: "done", Tries: 2},
		},
	}
	av, err := encodeItem(item)
	if err != nil {
		t.Fatal(err)
	}
	if _, isList := av["data"].(*types.AttributeValueMemberM).Value["strings"].(*types.AttributeValueMemberL); !isList {
		t.Errorf("[]string encoded as %T, want a list", av["data"].(*types.AttributeValueMemberM).Value["strings"])
	}
	got, err := decodeItem(av)
	if err != nil {
		t.Fatal(err)
	}
	want, err := table.NormalizeValue(map[string]any(item))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(map[string]any(got), want) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, want)
	}
	if n := got.Data()["segments_done"]; n != 3.0 {
		t.Errorf("number read back as %T %v, want float64 3", n, n)
	}
}

func TestDecodeForeignSets(t *testing.T) {
	t.Parallel()
	got, err := decodeItem(map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "p"},
		"SK": &types.AttributeValueMemberS{Value: "s"},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
		"ss": &types.AttributeValueMemberSS{Value: []string{"a"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["ns"], []any{1.0, 2.5}) || !reflect.DeepEqual(got["ss"], []any{"a"}) {
		t.Errorf("sets decoded as %#v and %#v, want []any", got["ns"], got["ss"])
	}
}

func TestEncodeRejects(t *testing.T) {
	t.Parallel()
	for name, item := range map[string]table.Item{
		"no SK":          {table.AttrPK: "p"},
		"numeric PK":     {table.AttrPK: 1, table.AttrSK: "s"},
		"empty PK":       {table.AttrPK: "", table.AttrSK: "s"},
		"numeric GSI":    {table.AttrPK: "p", table.AttrSK: "s", table.AttrGSI1PK: 7},
		"null GSI":       {table.AttrPK: "p", table.AttrSK: "s", table.AttrGSI2SK: nil},
		"NaN":            {table.AttrPK: "p", table.AttrSK: "s", "n": math.NaN()},
		"nested channel": {table.AttrPK: "p", table.AttrSK: "s", "data": map[string]any{"c": make(chan int)}},
	} {
		if _, err := encodeItem(item); !errors.Is(err, table.ErrInvalidUpdate) {
			t.Errorf("%s: got %v, want ErrInvalidUpdate", name, err)
		}
	}
}

func TestExpired(t *testing.T) {
	t.Parallel()
	const now = 1000
	for _, tt := range []struct {
		ttl  any
		want bool
	}{{nil, false}, {999.0, true}, {1000.0, true}, {1001.0, false}, {"500", false}} {
		item := table.Item{}
		if tt.ttl != nil {
			item[table.AttrTTL] = tt.ttl
		}
		if got := expired(item, now); got != tt.want {
			t.Errorf("expired(ttl=%v) = %v, want %v", tt.ttl, got, tt.want)
		}
	}
}

func TestPageToken(t *testing.T) {
	t.Parallel()
	av := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "WF#1"}, "SK": &types.AttributeValueMemberS{Value: "STEP"},
		"GSI1PK": &types.AttributeValueMemberS{Value: "g"}, "GSI1SK": &types.AttributeValueMemberS{Value: "in_progress#2026"},
		"data": &types.AttributeValueMemberM{},
	}
	tok, err := encodeToken(av, table.AttrGSI1PK, table.AttrGSI1SK)
	if err != nil {
		t.Fatal(err)
	}
	key, err := decodeToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != 4 || key["GSI1SK"].(*types.AttributeValueMemberS).Value != "in_progress#2026" {
		t.Errorf("token decoded to %#v", key)
	}
	if _, err := encodeToken(av, table.AttrGSI2PK, table.AttrGSI2SK); err == nil {
		t.Error("token from an item outside the index: no error")
	}
	for _, bad := range []string{"%%%", "bm90IGpzb24", "e30"} { // not base64, "not json", "{}"
		if _, err := decodeToken(bad); err == nil {
			t.Errorf("decodeToken(%q): no error", bad)
		}
	}
}
