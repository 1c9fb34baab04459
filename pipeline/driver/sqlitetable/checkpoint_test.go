package sqlitetable_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// Commits leave their pages in the WAL; the database file grows only when
// a checkpoint copies them over. The writer checkpoints itself only past
// a large WAL, so the database file growing soon after a few megabytes of
// commits shows the background checkpointer at work.
func TestCheckpointsRunBesideTheWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	tb, err := sqlitetable.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pad := strings.Repeat("x", 1000)
	for i := range 2000 {
		it := table.Item{table.AttrPK: fmt.Sprintf("P#%d", i%50), table.AttrSK: fmt.Sprintf("S#%05d", i), "pad": pad}
		if err := tb.Put(ctx, it, nil); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > before.Size()+1<<20 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("database file still %d bytes (%d at open) 10 s after 2 MB of commits: nothing checkpointed the WAL", st.Size(), before.Size())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
