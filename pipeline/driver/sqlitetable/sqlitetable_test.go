package sqlitetable_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/repotest"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

func openTable(t testing.TB) *sqlitetable.Table {
	t.Helper()
	tb, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

func TestConformance(t *testing.T) {
	t.Parallel()
	newTable := func(t *testing.T) table.Table { return openTable(t) }
	tabletest.Exercise(t, newTable)
	repotest.Exercise(t, newTable)
}

func TestConformanceInMemory(t *testing.T) {
	t.Parallel()
	tb, err := sqlitetable.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	// One shared table for every subtest, as on a remote emulator.
	shared := func(t *testing.T) table.Table { return tb }
	tabletest.Exercise(t, shared, tabletest.Reduced(), tabletest.Sequential())
	repotest.Exercise(t, shared, tabletest.Reduced(), tabletest.Sequential())
}

// Two handles on one file (two processes, in effect) serialise their
// transactions: no lost update.
func TestTwoHandlesOneFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shared.db")
	var handles []*sqlitetable.Table
	for range 2 {
		tb, err := sqlitetable.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tb.Close() })
		handles = append(handles, tb)
	}
	const each = 40
	k := table.Key{PK: "counter", SK: "C"}
	var wg sync.WaitGroup
	for _, tb := range handles {
		for range 2 {
			wg.Go(func() {
				for range each {
					if _, err := tb.Update(t.Context(), k, []table.Update{table.Add{Path: "n", Delta: 1}}, nil); err != nil {
						t.Errorf("Add: %v", err)
					}
				}
			})
		}
	}
	wg.Wait()
	it, err := handles[1].Get(t.Context(), k)
	if err != nil || it["n"] != float64(4*each) {
		t.Fatalf("counter = %v, %v; want %d", it["n"], err, 4*each)
	}
}
