package metered_test

import (
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/blob/blobtest"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/metered"
	"github.com/docpipe/docpipe/pipeline/repotest"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

// The wrappers must be transparent: they pass the same conformance suites
// as the drivers they wrap, and they count.
func TestMeteredTableConforms(t *testing.T) {
	var m metered.Meter
	newTable := func(t *testing.T) table.Table {
		tbl, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tbl.Close() })
		return m.Table(tbl)
	}
	tabletest.Exercise(t, newTable)
	repotest.Exercise(t, newTable)
	t.Cleanup(func() { // after the parallel subtests
		if c := m.Counts(); c.TableReads == 0 || c.TableWrites == 0 {
			t.Errorf("counts = %+v", c)
		}
	})
}

func TestMeteredStoreConforms(t *testing.T) {
	var m metered.Meter
	blobtest.Exercise(t, func(t *testing.T) blob.Store {
		s, err := dirblob.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return m.Store(s)
	})
	t.Cleanup(func() {
		if c := m.Counts(); c.BlobPuts == 0 || c.BlobReads == 0 || c.BlobDeletes == 0 {
			t.Errorf("counts = %+v", c)
		}
	})
}
