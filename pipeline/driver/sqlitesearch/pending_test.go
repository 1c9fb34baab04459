package sqlitesearch

import (
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
)

func TestIndexingHoldsPendingTermsInMemoryUpToItsBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blobs, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	ix := &Indexer{Blobs: blobs}
	path := filepath.Join(dir, "state.db")
	tb, err := sqlitetable.Open(path, sqlitetable.WithWriteHook(ix))
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	x, err := Open(path, ix)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx := t.Context()
	for range 2 {
		tx, err := x.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		// A workflow with nothing to index: the setting is made all the
		// same, once.
		if err := ix.indexOrRecord(ctx, &sqlitetable.HookTx{Tx: tx}, pipeline.Workflow{ID: "W", ProjectID: "p", DocumentID: "D"}, known{}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	var rows, size int
	if err := x.db.QueryRow(`SELECT COUNT(*), MAX(v) FROM search_text_config WHERE k = 'hashsize'`).Scan(&rows, &size); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || size != pendingTermsBytes {
		t.Errorf("hashsize: %d rows, %d; want %d", rows, size, pendingTermsBytes)
	}
}
