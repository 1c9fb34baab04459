package sqlitetable_test

import (
	"math"
	"testing"

	"github.com/docpipe/docpipe/pipeline/table"
)

func TestRejectsBadItems(t *testing.T) {
	t.Parallel()
	tb := openTable(t)
	ctx := t.Context()
	for name, it := range map[string]table.Item{
		"no PK":         {"SK": "s"},
		"numeric SK":    {"PK": "p", "SK": 1},
		"empty GSI key": {"PK": "p", "SK": "s", "GSI1PK": "", "GSI1SK": "x"},
		"numeric GSI":   {"PK": "p", "SK": "s", "GSI2PK": "g", "GSI2SK": 3},
		"NaN":           {"PK": "p", "SK": "s", "x": math.NaN()},
	} {
		if err := tb.Put(ctx, it, nil); err == nil {
			t.Errorf("%s: Put accepted %v", name, it)
		}
	}
	if err := tb.Transact(ctx, nil); err == nil {
		t.Error("empty transaction accepted")
	}
}
