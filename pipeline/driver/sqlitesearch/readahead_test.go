package sqlitesearch_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitesearch"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// aheadSpy is the indexer as a write hook that notes what its read
// ahead returned and, once it has read, fails every segment text read
// (textsGone): an index written from those reads can only come from
// what was read ahead.
type aheadSpy struct {
	*sqlitesearch.Indexer
	aheads    atomic.Int32 // read aheads that returned something
	textsGone *atomic.Bool
}

func (s *aheadSpy) ReadAhead(ctx context.Context, writes []sqlitetable.Change) any {
	ahead := s.Indexer.ReadAhead(ctx, writes)
	if ahead != nil {
		s.aheads.Add(1)
		s.textsGone.Store(true)
	}
	return ahead
}

// goneTexts fails reads of keys with one of these suffixes once gone is
// set.
type goneTexts struct {
	blob.Store
	gone     *atomic.Bool
	suffixes []string
}

func (s goneTexts) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if s.gone.Load() && slices.ContainsFunc(s.suffixes, func(x string) bool { return strings.HasSuffix(key, x) }) {
		return nil, errors.New("read after the read ahead")
	}
	return s.Store.Get(ctx, key)
}

// newSpiedFixture is a fixture whose indexer is an aheadSpy: once a read
// ahead returned something, reads of keys with these suffixes fail
// (gone is set) until the test clears gone.
func newSpiedFixture(t *testing.T, suffixes ...string) (f *fixture, spy *aheadSpy, gone *atomic.Bool) {
	t.Helper()
	gone = new(atomic.Bool)
	f = newHookedFixture(t,
		func(s blob.Store) blob.Store { return goneTexts{s, gone, suffixes} },
		func(ix *sqlitesearch.Indexer) sqlitetable.WriteHook {
			spy = &aheadSpy{Indexer: ix, textsGone: gone}
			return spy
		})
	return f, spy, gone
}

func TestACompletionIsIndexedFromWhatWasReadBeforeTheWriter(t *testing.T) {
	t.Parallel()
	f, spy, gone := newSpiedFixture(t, "text.txt")
	f.complete("D1", "W1", "alpha beta", "gamma")
	if n := spy.aheads.Load(); n != 1 {
		t.Fatalf("%d read aheads returned something, want the completion's", n)
	}
	if hits := f.search("gamma"); len(hits) != 1 || hits[0].WorkflowID != "W1" || hits[0].Segment != 2 {
		t.Fatalf("gamma: %+v", hits)
	}
	if un, err := f.idx.Unindexed(t.Context()); err != nil || len(un) != 0 {
		t.Errorf("unindexed: %v, %v", un, err)
	}
	// Another write to the completed workflow reads nothing ahead.
	gone.Store(false)
	if _, err := f.tb.Update(t.Context(), pipeline.WorkflowKey("D1", "W1"), []table.Update{table.Set{Path: "data.superseded_by", Value: "W2"}}, nil); err != nil {
		t.Fatal(err)
	}
	if n := spy.aheads.Load(); n != 1 {
		t.Errorf("%d read aheads after a write to a completed workflow, want still 1", n)
	}
}

func TestTheSummaryIsReadAheadWhenTheCompletionWritesTheStepItem(t *testing.T) {
	t.Parallel()
	f, spy, _ := newSpiedFixture(t, "text.txt", "summary.json")
	ctx := t.Context()
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "D1", WorkflowID: "W1"}
	for key, body := range map[string]string{
		pipeline.SegmentTextBlobKey(ref, 1): "alpha",
		pipeline.UnitsBlobKey(ref):          `[{"index":1,"kind":"page"}]`,
		pipeline.SummaryBlobKey(ref):        `{"summary":[{"text":"zebra crossing"}]}`,
	} {
		if err := blob.PutBytes(ctx, f.blobs, key, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	key, steps := pipeline.WorkflowKey("D1", "W1"), pipeline.StepKey("W1")
	data := map[string]any{"id": "W1", "project_id": "p", "document_id": "D1", "file_name": "D1.pdf", "pipeline": "docpipe", "pipeline_version": 1.0, "status": "in_progress"}
	if err := f.tb.Put(ctx, table.Item{table.AttrPK: key.PK, table.AttrSK: key.SK, table.AttrData: data}, nil); err != nil {
		t.Fatal(err)
	}
	err := f.tb.Transact(ctx, []table.TxAction{
		table.TxUpdate{Key: key, Updates: []table.Update{table.Set{Path: "data.status", Value: "completed"}}},
		table.TxPut{Item: table.Item{table.AttrPK: steps.PK, table.AttrSK: steps.SK, table.AttrData: map[string]any{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := spy.aheads.Load(); n != 1 {
		t.Fatalf("%d read aheads returned something", n)
	}
	if hits := f.search("zebra"); len(hits) != 1 || hits[0].Kind != "document" {
		t.Fatalf("zebra: %+v", hits)
	}
}

func TestADocumentOverTheReadAheadBudgetIsReadInTheWriter(t *testing.T) {
	t.Parallel()
	gone := new(atomic.Bool) // never set: the texts stay readable
	var spy *aheadSpy
	f := newHookedFixture(t,
		func(s blob.Store) blob.Store { return goneTexts{s, gone, []string{"text.txt"}} },
		func(ix *sqlitesearch.Indexer) sqlitetable.WriteHook {
			spy = &aheadSpy{Indexer: ix, textsGone: new(atomic.Bool)}
			return spy
		})
	big := strings.Repeat("word ", 130_000) // 650 KB a segment
	f.complete("D1", "W1", big, big+"needle")
	if n := spy.aheads.Load(); n != 0 {
		t.Fatalf("%d read aheads held a 1.3 MB document", n)
	}
	if hits := f.search("needle"); len(hits) != 1 || hits[0].Segment != 2 {
		t.Fatalf("needle: %+v", hits)
	}
}

// A backfilled big document whose text is unchanged: the read ahead
// keeps only each segment's digest, and the writer relabels every row
// without reading a text. One changed segment makes the writer read them.
func TestABigSupersedingDocumentKeepsItsRowsWithoutReadingInTheWriter(t *testing.T) {
	t.Parallel()
	f, spy, gone := newSpiedFixture(t, "text.txt")
	big := strings.Repeat("word ", 130_000) // 650 KB a segment
	f.complete("D1", "W1", big+"first", big+"needle")
	before, _, _ := f.rowIDs("D1")
	if n := spy.aheads.Load(); n != 0 {
		t.Fatalf("%d read aheads held a 1.3 MB document that supersedes none", n)
	}

	gone.Store(false)
	f.completeWith("p", "D1", "W2", "W1", big+"first", big+"needle")
	if n := spy.aheads.Load(); n != 1 {
		t.Fatalf("%d read aheads for the superseding workflow, want 1", n)
	}
	after, texts, digests := f.rowIDs("D1")
	if !maps.Equal(before, after) || texts != 2 || digests != 2 {
		t.Fatalf("rows %v, then %v; %d texts, %d digests", before, after, texts, digests)
	}
	if hits := f.search("needle"); len(hits) != 1 || hits[0].WorkflowID != "W2" || hits[0].Segment != 2 {
		t.Fatalf("needle: %+v", hits)
	}
	if un, err := f.idx.Unindexed(t.Context()); err != nil || len(un) != 0 {
		t.Errorf("unindexed: %v, %v", un, err)
	}

	// W3 changes the second page: the writer needs its text, and reads.
	spy.textsGone = new(atomic.Bool)
	gone.Store(false)
	f.completeWith("p", "D1", "W3", "W2", big+"first", big+"changed")
	if hits := f.search("changed"); len(hits) != 1 || hits[0].WorkflowID != "W3" || hits[0].Segment != 2 {
		t.Fatalf("changed: %+v", hits)
	}
	if hits := f.search("needle"); len(hits) != 0 {
		t.Errorf("the old text is still found: %+v", hits)
	}
	if hits := f.search("first"); len(hits) != 1 || hits[0].WorkflowID != "W3" {
		t.Errorf("first: %+v", hits)
	}
	if kept, _, _ := f.rowIDs("D1"); kept[1] != before[1] || kept[2] == before[2] {
		t.Errorf("rows %v, then %v: want page 1 kept, page 2 new", before, kept)
	}
}
