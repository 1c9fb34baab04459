package web_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/internal/netguard"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/pipeline/web"
)

// site is a small web site that records what it was asked.
type site struct {
	*httptest.Server
	mu       sync.Mutex
	agents   []string
	requests []string
	notMod   int
}

const robots = "User-agent: docpipe\nDisallow: /private/\n\nUser-agent: *\nDisallow: /\n"

func newSite(t *testing.T) *site {
	s := &site{}
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
			if r.Header.Get("If-None-Match") == `"v1"` {
				s.mu.Lock()
				s.notMod++
				s.mu.Unlock()
				w.WriteHeader(http.StatusNotModified)
				return
			}
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, robots) })
	mux.Handle("/{$}", page(`<html><body><h1>Home</h1><p>Welcome to the harbour office.</p>
		<a href="/a">A</a> <a href="b#top">B</a> <a href="/private/secret">secret</a>
		<a href="https://elsewhere.example/">elsewhere</a> <a href="mailto:x@example.com">mail</a>
		<a href="/report.pdf">report</a> <a href="/missing">missing</a></body></html>`))
	mux.Handle("/a", page(`<html><body><p>Page A about ferries.</p><a href="/deep">deeper</a><a href="/">home</a></body></html>`))
	mux.Handle("/b", page(`<html><body><p>Page B about tides.</p></body></html>`))
	mux.Handle("/deep", page(`<html><body><p>Too deep.</p></body></html>`))
	mux.Handle("/private/secret", page(`<p>never fetched</p>`))
	mux.HandleFunc("/report.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		fmt.Fprint(w, "%PDF-1.4")
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.agents = append(s.agents, r.UserAgent())
		s.requests = append(s.requests, r.URL.Path)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) url(t *testing.T, path string) *url.URL {
	u, err := web.ParseURL(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func localFetcher() *web.Fetcher {
	return web.NewFetcher(web.FetcherOptions{UserAgent: web.UserAgent("v1.2.3"), AllowPrivateNetwork: true})
}

func TestCrawlFollowsSameHostLinksToDepth(t *testing.T) {
	s := newSite(t)
	res, err := localFetcher().Crawl(context.Background(), s.url(t, "/"), web.Limits{Depth: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Pages {
		got = append(got, strings.TrimPrefix(p.URL, s.URL))
	}
	if want := "/ /a /b"; strings.Join(got, " ") != want {
		t.Errorf("pages = %v, want %s", got, want)
	}
	skipped := map[string]string{}
	for _, sk := range res.Skipped {
		skipped[strings.TrimPrefix(sk.URL, s.URL)] = sk.Reason
	}
	for path, want := range map[string]string{
		"/private/secret": "disallowed by the site's robots.txt",
		"/report.pdf":     "not an HTML page (application/pdf)",
		"/missing":        "HTTP 404",
	} {
		if !strings.Contains(skipped[path], want) {
			t.Errorf("skip reason of %s = %q, want %q", path, skipped[path], want)
		}
	}
	if len(skipped) != 3 {
		t.Errorf("skipped = %v", skipped)
	}
	for _, p := range s.requests {
		if p == "/deep" || p == "/private/secret" {
			t.Errorf("fetched %s", p)
		}
	}
	for _, a := range s.agents {
		if a != "docpipe/v1.2.3 (+https://github.com/docpipe/docpipe)" {
			t.Fatalf("User-Agent = %q", a)
		}
	}
	if s.requests[0] != "/robots.txt" {
		t.Errorf("first request %s, want /robots.txt", s.requests[0])
	}
}

func TestCrawlLimits(t *testing.T) {
	s := newSite(t)
	f := localFetcher()
	res, err := f.Crawl(context.Background(), s.url(t, "/"), web.Limits{Depth: 3, MaxPages: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 2 {
		t.Fatalf("%d pages, want 2", len(res.Pages))
	}
	limited := 0
	for _, sk := range res.Skipped {
		if strings.Contains(sk.Reason, "page limit of 2") {
			limited++
		}
	}
	if limited == 0 {
		t.Errorf("no page skipped for the page limit: %v", res.Skipped)
	}
	res, err = f.Crawl(context.Background(), s.url(t, "/"), web.Limits{Depth: 1, MaxBytes: 450}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var total int
	for _, p := range res.Pages {
		total += len(p.Body)
	}
	if total > 450 || len(res.Pages) == 3 {
		t.Errorf("%d pages of %d bytes under a 450-byte limit", len(res.Pages), total)
	}
	if _, err := f.Crawl(context.Background(), s.url(t, "/"), web.Limits{MaxBytes: 10}, nil); err == nil {
		t.Error("a start page over the byte limit was accepted")
	}
}

func TestConditionalFetch(t *testing.T) {
	s := newSite(t)
	f := localFetcher()
	first, err := f.Fetch(context.Background(), s.url(t, "/b"), nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Fetch(context.Background(), s.url(t, "/b"), &first)
	if err != nil {
		t.Fatal(err)
	}
	if !again.NotModified || !bytes.Equal(again.Body, first.Body) || s.notMod != 1 {
		t.Fatalf("second fetch: not modified %v, %d 304s, body %q", again.NotModified, s.notMod, again.Body)
	}
}

func TestRefusals(t *testing.T) {
	s := newSite(t)
	strict := web.NewFetcher(web.FetcherOptions{})
	_, err := strict.Fetch(context.Background(), s.url(t, "/"), nil)
	var fa *netguard.ForbiddenAddressError
	if !errors.As(err, &fa) || fa.Kind != "loopback" {
		t.Errorf("fetching 127.0.0.1 without --allow-private-network: %v", err)
	}
	if len(s.requests) != 0 {
		t.Errorf("the server was reached: %v", s.requests)
	}
	for _, raw := range []string{"ftp://example.com/x", "file:///etc/passwd", "/relative", "http://"} {
		if _, err := web.ParseURL(raw); steperr.Name(err) != steperr.NameInvalidInput {
			t.Errorf("ParseURL(%q) = %v, want InvalidInput", raw, err)
		}
	}
	// A redirect to another scheme is not followed.
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	}))
	defer redirect.Close()
	u, _ := web.ParseURL(redirect.URL + "/x")
	if _, err := localFetcher().Fetch(context.Background(), u, nil); err == nil || !strings.Contains(err.Error(), "only http and https") {
		t.Errorf("redirect to file://: %v", err)
	}
}
