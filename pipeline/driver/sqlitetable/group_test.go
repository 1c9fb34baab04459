package sqlitetable_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// Transactions committed together keep their own conditions: of many
// racing claims on one item exactly one wins, and the losers' other
// writes are not applied, while the independent transactions committed
// beside them all are.
func TestConcurrentTransactionsKeepTheirConditions(t *testing.T) {
	t.Parallel()
	tb := openTable(t)
	ctx := t.Context()
	const workers = 32
	claim := table.Key{PK: "claim", SK: "C"}
	var wg sync.WaitGroup
	wins := make([]bool, workers)
	for w := range workers {
		wg.Go(func() {
			err := tb.Transact(ctx, []table.TxAction{
				table.TxPut{Item: table.Item{"PK": claim.PK, "SK": claim.SK, "owner": float64(w)}, Cond: table.NotExists{Path: table.AttrPK}},
				table.TxPut{Item: table.Item{"PK": "winner", "SK": fmt.Sprint(w)}},
			})
			switch {
			case err == nil:
				wins[w] = true
			case !errors.Is(err, table.ErrConditionFailed):
				t.Errorf("worker %d: %v", w, err)
			}
			for i := range 5 {
				k := table.Key{PK: "own", SK: fmt.Sprintf("%d-%d", w, i)}
				if _, err := tb.Update(ctx, k, []table.Update{table.Add{Path: "n", Delta: 1}}, table.NotExists{Path: table.AttrPK}); err != nil {
					t.Errorf("worker %d: independent update: %v", w, err)
				}
				if _, err := tb.Update(ctx, table.Key{PK: "counter", SK: "C"}, []table.Update{table.Add{Path: "n", Delta: 1}}, nil); err != nil {
					t.Errorf("worker %d: counter: %v", w, err)
				}
			}
		})
	}
	wg.Wait()

	won := -1
	for w, ok := range wins {
		if !ok {
			continue
		}
		if won >= 0 {
			t.Fatalf("workers %d and %d both claimed the item", won, w)
		}
		won = w
	}
	if won < 0 {
		t.Fatal("no worker claimed the item")
	}
	it, err := tb.Get(ctx, claim)
	if err != nil || it["owner"] != float64(won) {
		t.Fatalf("claim = %v, %v; want owner %d", it, err, won)
	}
	page, err := tb.Query(ctx, table.Query{PK: "winner"})
	if err != nil || len(page.Items) != 1 || page.Items[0]["SK"] != fmt.Sprint(won) {
		t.Fatalf("winner items = %v, %v; want only %d", page.Items, err, won)
	}
	page, err = tb.Query(ctx, table.Query{PK: "own"})
	if err != nil || len(page.Items) != workers*5 {
		t.Fatalf("independent items = %d, %v; want %d", len(page.Items), err, workers*5)
	}
	it, err = tb.Get(ctx, table.Key{PK: "counter", SK: "C"})
	if err != nil || it["n"] != float64(workers*5) {
		t.Fatalf("counter = %v, %v; want %d", it["n"], err, workers*5)
	}
}

// A transaction the database refuses to write fails alone; those it was
// batched with are committed.
func TestWriteErrorFailsOnlyItsTransaction(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	tb, err := sqlitetable.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	// A trigger stands in for a write error such as a full disk, on one
	// partition only.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON items WHEN NEW.pk = 'refused'
		BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	ctx := t.Context()
	const workers = 16
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range 10 {
				pk := "accepted"
				if i%5 == 0 && w%2 == 0 {
					pk = "refused"
				}
				err := tb.Put(ctx, table.Item{"PK": pk, "SK": fmt.Sprintf("%d-%d", w, i)}, nil)
				if (err != nil) != (pk == "refused") {
					t.Errorf("put %s %d-%d: %v", pk, w, i, err)
				}
			}
		})
	}
	wg.Wait()
	page, err := tb.Query(ctx, table.Query{PK: "accepted"})
	want := workers*10 - workers/2*2
	if err != nil || len(page.Items) != want {
		t.Fatalf("accepted items = %d, %v; want %d", len(page.Items), err, want)
	}
}
