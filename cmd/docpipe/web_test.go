package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// harbourSite serves three linked pages; version changes page B's text.
func harbourSite(t *testing.T, version *atomic.Int32, notModified *atomic.Int32) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		"/":  `<html><head><title>Harbour</title></head><body><h1>Harbour office</h1><p>Ferries leave Bergen at noon for the fjords.</p><a href="/a">A</a> <a href="/b">B</a></body></html>`,
		"/a": `<html><body><p>The pilot boat meets tankers outside the breakwater every morning.</p></body></html>`,
		"/b": `<html><body><p>Tide tables for Stavanger are published weekly, version %d.</p></body></html>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/b" {
			body = fmt.Sprintf(body, version.Load())
		}
		etag := fmt.Sprintf(`"%s-%d"`, strings.Trim(r.URL.Path, "/"), version.Load())
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "text/html")
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunURLs(t *testing.T) {
	t.Parallel()
	var version, notModified atomic.Int32
	version.Store(1)
	srv := harbourSite(t, &version, &notModified)
	home := t.TempDir()
	runURL := func(args ...string) []docResult {
		t.Helper()
		out, _ := cli(t, append([]string{"run", "--home", home, "--json", "--progress", "none", "--allow-private-network"}, args...)...)
		return decodeLines[docResult](t, out)
	}

	crawl := runURL("--crawl-depth", "1", srv.URL+"/")
	if len(crawl) != 1 || crawl[0].Status != "completed" || crawl[0].Segments != 3 || crawl[0].File != srv.URL+"/" {
		t.Fatalf("crawl: %+v", crawl)
	}
	again := runURL("--crawl-depth", "1", srv.URL+"/")
	if again[0].WorkflowID != crawl[0].WorkflowID || !again[0].Reused || notModified.Load() != 3 {
		t.Errorf("unchanged crawl: %+v (%d pages not modified)", again, notModified.Load())
	}
	version.Store(2)
	changed := runURL("--crawl-depth", "1", srv.URL+"/")
	if changed[0].WorkflowID == crawl[0].WorkflowID || changed[0].Status != "completed" || changed[0].Reused {
		t.Errorf("changed crawl: %+v", changed)
	}

	single := runURL(srv.URL + "/a")
	if len(single) != 1 || single[0].Status != "completed" || single[0].Segments != 1 {
		t.Fatalf("single page: %+v", single)
	}
	out, err := cli(t, "show", "--home", home, "--text", single[0].WorkflowID)
	if err != nil || !strings.Contains(out, "pilot boat meets tankers") {
		t.Errorf("show --text: %v\n%s", err, out)
	}

	list := filepath.Join(t.TempDir(), "pages.urls")
	content := "# harbour pages\n" + srv.URL + "/a\n\n" + srv.URL + "/missing\n"
	if err := os.WriteFile(list, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = cli(t, "run", "--home", home, "--json", "--progress", "none", "--allow-private-network", list)
	if code, ok := err.(exitError); !ok || code.code != 1 {
		t.Errorf("a URL list with a missing page: exit %v, want 1", err)
	}
	fromList := decodeLines[docResult](t, out)
	if len(fromList) != 2 || fromList[0].WorkflowID != single[0].WorkflowID || fromList[1].Status != statusNotProcessed || !strings.Contains(fromList[1].Error, "404") {
		t.Errorf("URL list: %+v", fromList)
	}

	out, _ = cli(t, "run", "--home", home, "--json", "--progress", "none", srv.URL+"/a")
	if r := decodeLines[docResult](t, out); len(r) != 1 || r[0].Status != statusNotProcessed || !strings.Contains(r[0].Error, "loopback") {
		t.Errorf("loopback without --allow-private-network: %+v", r)
	}
}
