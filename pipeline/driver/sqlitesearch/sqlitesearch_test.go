package sqlitesearch_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitesearch"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/search"
	"github.com/docpipe/docpipe/pipeline/table"
)

type fixture struct {
	t     *testing.T
	path  string // the state file
	tb    *sqlitetable.Table
	blobs blob.Store
	idx   *sqlitesearch.Index
}

func newFixture(t *testing.T, blobs func(blob.Store) blob.Store) *fixture {
	t.Helper()
	return newHookedFixture(t, blobs, nil)
}

// newHookedFixture is newFixture whose table runs hook(the indexer) as
// its write hook; a nil hook runs the indexer itself.
func newHookedFixture(t *testing.T, blobs func(blob.Store) blob.Store, hook func(*sqlitesearch.Indexer) sqlitetable.WriteHook) *fixture {
	t.Helper()
	dir := t.TempDir()
	store, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, blobs: store, path: filepath.Join(dir, "state.db")}
	if blobs != nil {
		f.blobs = blobs(store)
	}
	ix := &sqlitesearch.Indexer{Blobs: f.blobs}
	path := filepath.Join(dir, "state.db")
	var h sqlitetable.WriteHook = ix
	if hook != nil {
		h = hook(ix)
	}
	if f.tb, err = sqlitetable.Open(path, sqlitetable.WithWriteHook(h)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.tb.Close() })
	if f.idx, err = sqlitesearch.Open(path, ix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.idx.Close() })
	return f
}

// complete stores a workflow of document doc with these segment texts
// and marks it completed.
func (f *fixture) complete(doc, wf string, texts ...string) {
	f.t.Helper()
	f.completeIn("p", doc, wf, texts...)
}

// completeIn is complete in a project of one's choosing.
func (f *fixture) completeIn(project, doc, wf string, texts ...string) {
	f.t.Helper()
	f.completeWith(project, doc, wf, "", texts...)
}

// completeWith is completeIn for a workflow that supersedes another
// (a backfill's), or none when supersedes is empty.
func (f *fixture) completeWith(project, doc, wf, supersedes string, texts ...string) {
	f.t.Helper()
	ctx := f.t.Context()
	ref := pipeline.WorkflowRef{ProjectID: project, DocumentID: doc, WorkflowID: wf}
	units := "["
	for i, text := range texts {
		if i > 0 {
			units += ","
		}
		units += `{"index":` + strconv.Itoa(i+1) + `,"kind":"page"}`
		if err := blob.PutBytes(ctx, f.blobs, pipeline.SegmentTextBlobKey(ref, i+1), []byte(text)); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := blob.PutBytes(ctx, f.blobs, pipeline.UnitsBlobKey(ref), []byte(units+"]")); err != nil {
		f.t.Fatal(err)
	}
	key := pipeline.WorkflowKey(doc, wf)
	data := map[string]any{"id": wf, "project_id": project, "document_id": doc, "file_name": doc + ".pdf", "pipeline": "docpipe", "pipeline_version": 1.0, "status": "in_progress"}
	if supersedes != "" {
		data["supersedes"] = supersedes
	}
	if err := f.tb.Put(ctx, table.Item{table.AttrPK: key.PK, table.AttrSK: key.SK, table.AttrData: data}, nil); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.tb.Update(ctx, key, []table.Update{table.Set{Path: "data.status", Value: "completed"}}, nil); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) search(q string) []search.Hit {
	f.t.Helper()
	res, err := f.idx.Search(f.t.Context(), search.Query{Text: q})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Hits
}

func TestCompletionIndexesTheWorkflowAndReplacesTheDocumentsEarlierOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.complete("D1", "W1", "alpha beta", "gamma delta")
	f.complete("D2", "W2", "alpha omega")
	hits := f.search("gamma")
	if len(hits) != 1 || hits[0].WorkflowID != "W1" || hits[0].Segment != 2 || hits[0].Kind != "page" || hits[0].FileName != "D1.pdf" || hits[0].Snippet != "**gamma** delta" {
		t.Fatalf("gamma: %+v", hits)
	}
	if hits := f.search("alpha"); len(hits) != 2 {
		t.Errorf("alpha: %+v", hits)
	}
	// A newer analysis of D1 replaces the older one's rows.
	f.complete("D1", "W3", "epsilon")
	if hits := f.search("gamma OR alpha"); len(hits) != 1 || hits[0].WorkflowID != "W2" {
		t.Errorf("W1 is still found: %+v", hits)
	}
	if hits := f.search("epsilon"); len(hits) != 1 || hits[0].WorkflowID != "W3" {
		t.Errorf("epsilon: %+v", hits)
	}
}

// rowIDs are the ids of document doc's rows in search_rows, by segment,
// and how many rows search_text and search_digests hold.
func (f *fixture) rowIDs(doc string) (ids map[int]int64, texts, digests int) {
	f.t.Helper()
	db, err := sql.Open("sqlite", "file:"+f.path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT segment, id FROM search_rows WHERE document = ?`, doc)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	ids = map[int]int64{}
	for rows.Next() {
		var seg int
		var id int64
		if err := rows.Scan(&seg, &id); err != nil {
			f.t.Fatal(err)
		}
		ids[seg] = id
	}
	if err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM search_text), (SELECT COUNT(*) FROM search_digests)`).Scan(&texts, &digests); err != nil {
		f.t.Fatal(err)
	}
	return ids, texts, digests
}

func TestANewerWorkflowKeepsTheRowsWhoseTextIsUnchanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.complete("D1", "W1", "alpha beta", "gamma delta", "zeta")
	before, _, _ := f.rowIDs("D1")
	// The next workflow of D1 (a backfill that reused the extraction)
	// has the first page as it was, the second changed, no third.
	f.complete("D1", "W2", "alpha beta", "gamma changed")
	after, texts, digests := f.rowIDs("D1")
	if after[1] != before[1] || after[2] == before[2] || len(after) != 2 || texts != 2 || digests != 2 {
		t.Fatalf("rows %v, then %v; %d texts, %d digests", before, after, texts, digests)
	}
	if hits := f.search("alpha"); len(hits) != 1 || hits[0].WorkflowID != "W2" || hits[0].Segment != 1 {
		t.Errorf("alpha: %+v", hits)
	}
	if hits := f.search("delta OR zeta"); len(hits) != 0 {
		t.Errorf("the old texts are still found: %+v", hits)
	}
	if hits := f.search("changed"); len(hits) != 1 || hits[0].WorkflowID != "W2" {
		t.Errorf("changed: %+v", hits)
	}
	// The kept row is W2's now: deleting W1 leaves it, deleting W2 not.
	if err := f.tb.Delete(t.Context(), pipeline.WorkflowKey("D1", "W1"), nil); err != nil {
		t.Fatal(err)
	}
	if hits := f.search("alpha"); len(hits) != 1 {
		t.Errorf("after deleting W1: %+v", hits)
	}
	if err := f.tb.Delete(t.Context(), pipeline.WorkflowKey("D1", "W2"), nil); err != nil {
		t.Fatal(err)
	}
	if ids, texts, digests := f.rowIDs("D1"); len(ids) != 0 || texts != 0 || digests != 0 {
		t.Errorf("after deleting W2: rows %v, %d texts, %d digests", ids, texts, digests)
	}
}

func TestDeletingAWorkflowDropsItsRows(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.complete("D1", "W1", "alpha")
	f.complete("D2", "W2", "alpha")
	if err := f.tb.Delete(t.Context(), pipeline.WorkflowKey("D1", "W1"), nil); err != nil {
		t.Fatal(err)
	}
	if hits := f.search("alpha"); len(hits) != 1 || hits[0].WorkflowID != "W2" {
		t.Errorf("after deleting W1: %+v", hits)
	}
}

func TestBadQueriesAreSaidInTheQuerysTerms(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.complete("D1", "W1", "alpha")
	for _, q := range []string{"alpha AND", `"alpha`, "nofield: alpha", "(alpha"} {
		_, err := f.idx.Search(t.Context(), search.Query{Text: q})
		var bad *search.BadQueryError
		if !errors.As(err, &bad) || strings.Contains(err.Error(), "SQL") {
			t.Errorf("%q: %v, want a BadQueryError without SQLite's words", q, err)
		}
	}
}

// failingTexts fails every read of a segment text.
type failingTexts struct{ blob.Store }

func (s failingTexts) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if strings.HasSuffix(key, "text.txt") {
		return nil, errors.New("disk on fire")
	}
	return s.Store.Get(ctx, key)
}

func TestAWorkflowWhoseBlobsFailCompletesUnindexed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(s blob.Store) blob.Store { return failingTexts{s} })
	f.complete("D1", "W1", "alpha", "beta")
	it, err := f.tb.Get(t.Context(), pipeline.WorkflowKey("D1", "W1"))
	if err != nil || it.Data()["status"] != "completed" {
		t.Fatalf("workflow: %v, %v", it, err)
	}
	if hits := f.search("alpha"); len(hits) != 0 {
		t.Errorf("a partly read workflow is indexed: %+v", hits)
	}
	un, err := f.idx.Unindexed(t.Context())
	if err != nil || !strings.Contains(un["W1"], "disk on fire") {
		t.Errorf("unindexed: %v, %v", un, err)
	}
}

// repeat is word n times among as many fillers.
func repeat(word string, n int) string {
	return strings.Repeat(word+" filler ", n)
}

func TestACommonWordsTopHitIsTheSegmentWithMostOfIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	// Indexed first, then 1,500 segments with the word once: every match
	// is ranked, however old.
	f.complete("D1", "W1", "other words", repeat("common", 10))
	once := make([]string, 1500)
	for i := range once {
		once[i] = repeat("common", 1) + "and a few more words " + strconv.Itoa(i)
	}
	f.complete("D2", "W2", once...)
	for range 2 {
		hits := f.search("common")
		if len(hits) != search.DefaultLimit || hits[0].DocumentID != "D1" || hits[0].Segment != 2 {
			t.Fatalf("top hit of %d: %+v, want D1's segment 2", len(hits), hits[0])
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].DocumentID != "D2" || hits[i].Score < hits[i-1].Score {
				t.Fatalf("hit %d: %+v after %+v", i, hits[i], hits[i-1])
			}
		}
	}
}

func TestWhenMoreMatchThanAreRankedTheNewestAreRanked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.idx.SetRankedMatches(10)
	f.complete("D1", "W1", repeat("common", 10))
	once := make([]string, 30)
	for i := range once {
		once[i] = repeat("common", 1) + strconv.Itoa(i)
	}
	f.complete("D2", "W2", once...)
	f.complete("D3", "W3", repeat("common", 3))
	res, err := f.idx.Search(t.Context(), search.Query{Text: "common", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Capped || res.Ranked != 10 {
		t.Errorf("ranked %d, capped %v: want 10 of more, capped", res.Ranked, res.Capped)
	}
	hits := res.Hits
	if len(hits) != 10 || hits[0].DocumentID != "D3" {
		t.Fatalf("%d hits, first %+v: want the 10 newest matches, D3's first", len(hits), hits[0])
	}
	for _, h := range hits[1:] {
		if h.DocumentID != "D2" || h.Segment < 22 {
			t.Errorf("hit %+v is not among the newest", h)
		}
	}
}

func TestAProjectsMatchesAreRankedWhateverOtherProjectsHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.idx.SetRankedMatches(5)
	f.completeIn("old", "D1", "W1", "common ground")
	once := make([]string, 20)
	for i := range once {
		once[i] = "common " + strconv.Itoa(i)
	}
	f.completeIn("new", "D2", "W2", once...)
	res, err := f.idx.Search(t.Context(), search.Query{Text: "common", Project: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Capped {
		t.Errorf("one match in the project, yet the results say more matched than were ranked")
	}
	hits := res.Hits
	if len(hits) != 1 || hits[0].DocumentID != "D1" || hits[0].ProjectID != "old" {
		t.Errorf("project old: %+v", hits)
	}
}

func TestEveryHitHasItsOwnSnippetFieldAndPlace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.complete("D1", "W1", "the first page says zebra once", "nothing here", "zebra zebra on page three")
	f.complete("D2", "W2", "a zebra crossing")
	hits := f.search("zebra")
	got := map[string]string{}
	for _, h := range hits {
		if h.Field != "body" || h.FileName != h.DocumentID+".pdf" {
			t.Errorf("hit %+v", h)
		}
		got[h.WorkflowID+"/"+strconv.Itoa(h.Segment)] = h.Snippet
	}
	want := map[string]string{
		"W1/1": "the first page says **zebra** once",
		"W1/3": "**zebra** **zebra** on page three",
		"W2/1": "a **zebra** crossing",
	}
	if len(hits) != len(want) {
		t.Fatalf("hits: %+v", hits)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: snippet %q, want %q", k, got[k], v)
		}
	}
	if hits[0].WorkflowID != "W1" || hits[0].Segment != 3 {
		t.Errorf("top hit %+v, want W1's segment 3", hits[0])
	}
}
