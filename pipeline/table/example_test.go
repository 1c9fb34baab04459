package table_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// A state change is a conditional write: it applies only to the state it
// was decided from, so of two workers racing on it exactly one wins. The
// same code runs on SQLite and on DynamoDB (dynamotable).
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "table-example")
	defer os.RemoveAll(dir)
	var t table.Table
	t, err := sqlitetable.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		panic(err)
	}
	defer t.(*sqlitetable.Table).Close()

	key := table.Key{PK: "WF#01", SK: "STEP"}
	item := table.Item{table.AttrPK: key.PK, table.AttrSK: key.SK, table.AttrData: map[string]any{"status": "pending"}}
	if err := t.Put(ctx, item, table.NotExists{Path: table.AttrPK}); err != nil {
		panic(err)
	}
	start := []table.Update{table.Set{Path: "data.status", Value: "in_progress"}}
	for worker := 1; worker <= 2; worker++ {
		_, err := t.Update(ctx, key, start, table.Equals{Path: "data.status", Value: "pending"})
		switch {
		case errors.Is(err, table.ErrConditionFailed):
			fmt.Printf("worker %d: someone else started it\n", worker)
		case err != nil:
			panic(err)
		default:
			fmt.Printf("worker %d: started\n", worker)
		}
	}
	got, _ := t.Get(ctx, key)
	fmt.Println(got.Data()["status"])
	// Output:
	// worker 1: started
	// worker 2: someone else started it
	// in_progress
}
