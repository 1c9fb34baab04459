package export

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

func TestPartitionedJSONLinesLayout(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	sink := &PartitionedJSONLines{Files: Dir(dir), Run: "R", PartBytes: 400}
	day := func(d int) time.Time { return time.Date(2025, 1, d, 23, 0, 0, 0, time.FixedZone("x", 3600)) }
	// Six partitions, more than are kept open, visited twice.
	var docs []pipeline.Workflow
	for i := range 12 {
		docs = append(docs, pipeline.Workflow{ID: "W", ProjectID: "p", DocumentID: "D", UpdatedAt: day(1 + i%6)})
	}
	rows := 0
	for _, wf := range docs {
		if err := sink.Begin(ctx, wf); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			r := documentRow(wf)
			r.Text = strings.Repeat("x", 100)
			if err := sink.Row(ctx, r); err != nil {
				t.Fatal(err)
			}
			rows++
		}
	}
	if err := sink.Close(ctx); err != nil {
		t.Fatal(err)
	}
	found := 0
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var date string
		if !strings.HasPrefix(rel, "project=p/date=2025-01-") || !strings.Contains(rel, "/part-R-") || !strings.HasSuffix(rel, ".jsonl") {
			t.Errorf("file %s is not in the partitioned layout", rel)
		}
		date = strings.TrimPrefix(strings.Split(rel, "/")[1], "date=")
		f, _ := os.Open(p)
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r Row
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if r.CompletedAt.Format(time.DateOnly) != date {
				t.Errorf("%s holds a row completed %s", rel, r.CompletedAt)
			}
			found++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != rows {
		t.Errorf("%d rows in the files, %d written", found, rows)
	}
}
