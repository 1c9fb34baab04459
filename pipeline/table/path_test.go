package table_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/docpipe/docpipe/pipeline/table"
)

func TestSplitPath(t *testing.T) {
	t.Parallel()
	parts, err := table.SplitPath("data.steps.ocr[0].status")
	if want := []string{"data", "steps", "ocr[0]", "status"}; err != nil || !slices.Equal(parts, want) {
		t.Fatalf("SplitPath = %q, %v; want %q", parts, err, want)
	}
	for _, bad := range []string{"", ".", "a..b", "a.", ".a"} {
		if _, err := table.SplitPath(bad); !errors.Is(err, table.ErrInvalidUpdate) {
			t.Errorf("SplitPath(%q) err = %v, want ErrInvalidUpdate", bad, err)
		}
	}
}

func TestUpdatePaths(t *testing.T) {
	t.Parallel()
	paths, err := table.UpdatePaths([]table.Update{
		table.Set{Path: "data.steps.ocr", Value: 1},
		table.Add{Path: "data.steps.ocrx", Delta: 1},
		table.Remove{Path: "ttl"},
	})
	if err != nil || len(paths) != 3 || !slices.Equal(paths[1], []string{"data", "steps", "ocrx"}) {
		t.Fatalf("UpdatePaths = %q, %v", paths, err)
	}
	for name, bad := range map[string][]table.Update{
		"key attribute": {table.Set{Path: table.AttrSK, Value: "x"}},
		"overlap":       {table.Set{Path: "data.a", Value: 1}, table.Remove{Path: "data.a.b"}},
		"same path":     {table.Add{Path: "n", Delta: 1}, table.Add{Path: "n", Delta: 2}},
		"empty name":    {table.Remove{Path: "data..a"}},
	} {
		if _, err := table.UpdatePaths(bad); !errors.Is(err, table.ErrInvalidUpdate) {
			t.Errorf("%s: err = %v, want ErrInvalidUpdate", name, err)
		}
	}
}
