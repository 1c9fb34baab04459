package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/docpipe/docpipe/pipeline/search"
)

// Searcher answers full-text queries: the local search index. On AWS
// there is none, and Options.Search is nil.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (search.Results, error)
}

// searchHit is a hit as the search page shows it: the snippet cut into
// plain and matched parts, so the template escapes every part.
type searchHit struct {
	search.Hit
	Where string
	Parts []snippetPart
}

type snippetPart struct {
	Text  string
	Match bool
}

// snippetParts splits a snippet at its match markers.
func snippetParts(s string) []snippetPart {
	var parts []snippetPart
	for i, p := range strings.Split(s, search.SnippetOpen) {
		if p != "" {
			parts = append(parts, snippetPart{Text: p, Match: i%2 == 1})
		}
	}
	return parts
}

// searchPage is GET /search?q=QUERY[&project=P]: the best hits of the
// local index.
func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	q := search.Query{Text: strings.TrimSpace(r.URL.Query().Get("q")), Project: r.URL.Query().Get("project")}
	data := map[string]any{"Query": q.Text, "Project": q.Project, "Available": s.opts.Search != nil}
	if q.Text == "" || s.opts.Search == nil {
		s.render(w, r, "search", data)
		return
	}
	res, err := s.opts.Search.Search(r.Context(), q)
	var bad *search.BadQueryError
	if errors.As(err, &bad) {
		data["Error"] = bad.Error()
		// render sets these too, but only before the status goes out.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusBadRequest)
		s.render(w, r, "search", data)
		return
	}
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	shown := make([]searchHit, len(res.Hits))
	for i, h := range res.Hits {
		shown[i] = searchHit{Hit: h, Where: h.Where(), Parts: snippetParts(h.Snippet)}
	}
	data["Hits"] = shown
	if res.Capped {
		data["Capped"] = res.Ranked
	}
	s.render(w, r, "search", data)
}
