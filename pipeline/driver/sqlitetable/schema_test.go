package sqlitetable_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// A file made with the indexes that lacked ttl opens with the new ones and
// keeps answering index queries and counts.
func TestOpenUpgradesIndexes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`
CREATE TABLE items (pk TEXT NOT NULL, sk TEXT NOT NULL, gsi1pk TEXT, gsi1sk TEXT, gsi2pk TEXT, gsi2sk TEXT, ttl REAL, item TEXT NOT NULL, PRIMARY KEY (pk, sk)) WITHOUT ROWID;
CREATE INDEX items_gsi1 ON items (gsi1pk, gsi1sk) WHERE gsi1pk IS NOT NULL;
CREATE INDEX items_gsi2 ON items (gsi2pk, gsi2sk) WHERE gsi2pk IS NOT NULL;
INSERT INTO items (pk, sk, gsi1pk, gsi1sk, item) VALUES ('p', 's', 'g', 'failed#1', '{"PK":"p","SK":"s","GSI1PK":"g","GSI1SK":"failed#1"}');`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	tb, err := sqlitetable.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	page, err := tb.Query(t.Context(), table.Query{Index: table.IndexGSI1, PK: "g", SKPrefix: "failed#", CountOnly: true})
	if err != nil || page.Count != 1 {
		t.Fatalf("count after upgrade: %+v, %v", page, err)
	}

	db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'items' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if want := []string{"items_gsi1_live", "items_gsi2_live"}; !slices.Equal(names, want) {
		t.Errorf("indexes %v, want %v", names, want)
	}
}
