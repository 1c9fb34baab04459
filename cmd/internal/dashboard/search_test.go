package dashboard

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/search"
)

// fakeSearcher answers every query with its results, or with a
// bad-query error for "AND".
type fakeSearcher struct {
	res  search.Results
	last search.Query
}

func (f *fakeSearcher) Search(_ context.Context, q search.Query) (search.Results, error) {
	f.last = q
	if q.Text == "AND" {
		return search.Results{}, &search.BadQueryError{Query: q.Text, Reason: "it ends where a word was expected"}
	}
	return f.res, nil
}

func TestSearchPage(t *testing.T) {
	t.Parallel()
	fs := &fakeSearcher{res: search.Results{Ranked: 1, Hits: []search.Hit{{WorkflowID: "01WF", FileName: "a<b>.pdf", Segment: 3, Kind: "page", Field: "body", Pipeline: "docpipe", PipelineVersion: 1,
		Snippet: "…the **invoice** <script>x</script>…"}}}}
	b := setup(t, func(o *Options) { o.Search = fs })

	r := b.get(t, "/search?q=invoice&project=acme")
	expectCode(t, r, http.StatusOK)
	body := string(r.body)
	for _, want := range []string{`<a href="/analyses/01WF">a&lt;b&gt;.pdf</a> · page 3`, "<mark>invoice</mark>", "&lt;script&gt;", `name="q" placeholder="Search" aria-label="Search the analyses" value="invoice"`} {
		if !strings.Contains(body, want) {
			t.Errorf("search page lacks %q:\n%s", want, body)
		}
	}
	if fs.last.Text != "invoice" || fs.last.Project != "acme" {
		t.Errorf("query %+v", fs.last)
	}
	if strings.Contains(body, `id="search-capped"`) {
		t.Error("all matches were ranked, yet the page says they were not")
	}
	fs.res.Ranked, fs.res.Capped = 2000, true
	r = b.get(t, "/search?q=invoice")
	if !strings.Contains(string(r.body), "More than 2000 segments match") {
		t.Errorf("a capped ranking is not said:\n%s", r.body)
	}

	r = b.get(t, "/search?q=AND")
	expectCode(t, r, http.StatusBadRequest)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("bad query page is %q", ct)
	}
	if !strings.Contains(string(r.body), "it ends where a word was expected") {
		t.Errorf("bad query page:\n%s", r.body)
	}

	// Every page carries the search box.
	if r := b.get(t, "/projects"); !strings.Contains(string(r.body), `action="/search"`) {
		t.Error("the layout has no search box")
	}
}

func TestSearchPageWithoutAnIndex(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	r := b.get(t, "/search?q=invoice")
	expectCode(t, r, http.StatusOK)
	if !strings.Contains(string(r.body), "no search index on AWS") {
		t.Errorf("page:\n%s", r.body)
	}
}
