// Package web fetches web pages for docpipe: one URL, or a crawl of the
// pages it links to on the same host. It identifies itself, obeys
// robots.txt, bounds pages, bytes and time, and by default connects only
// to public addresses.
package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/temoto/robotstxt"

	"github.com/docpipe/docpipe/internal/netguard"
	"github.com/docpipe/docpipe/pipeline/extract/warc"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// UserAgent is what docpipe calls itself, with its version.
func UserAgent(version string) string {
	if version == "" {
		version = "dev"
	}
	return "docpipe/" + version + " (+https://github.com/docpipe/docpipe)"
}

// Page is one fetched page (kept in a crawl's WARC file).
type Page = warc.Page

// Fetcher fetches pages. The zero value is not usable: call NewFetcher.
type Fetcher struct {
	userAgent string
	maxBytes  int64
	client    *http.Client

	mu     sync.Mutex
	robots map[string]*robotstxt.RobotsData // by scheme://host
}

// FetcherOptions configure a Fetcher.
type FetcherOptions struct {
	UserAgent string
	// MaxPageBytes bounds one response body (default 16 MiB).
	MaxPageBytes int64
	// AllowPrivateNetwork lets requests reach addresses that are not
	// public (see netguard): loopback, private, link-local (tests,
	// intranets).
	AllowPrivateNetwork bool
	// Timeout bounds one request, body included (default 30 s).
	Timeout time.Duration
}

// DefaultMaxPageBytes bounds one page unless FetcherOptions says otherwise.
const DefaultMaxPageBytes = 16 << 20

// NewFetcher returns a Fetcher whose connections go only where o allows.
func NewFetcher(o FetcherOptions) *Fetcher {
	if o.MaxPageBytes <= 0 {
		o.MaxPageBytes = DefaultMaxPageBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.UserAgent == "" {
		o.UserAgent = UserAgent("")
	}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would dial on our behalf, past the address check
		DialContext:           netguard.Dialer(o.AllowPrivateNetwork).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
	}
	client := &http.Client{
		Transport: tr,
		Timeout:   o.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return checkScheme(req.URL)
		},
	}
	return &Fetcher{userAgent: o.UserAgent, maxBytes: o.MaxPageBytes, client: client, robots: map[string]*robotstxt.RobotsData{}}
}

// ParseURL accepts absolute http and https URLs only.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("not a URL: %v", err)}
	}
	if err := checkScheme(u); err != nil {
		return nil, err
	}
	if u.Host == "" {
		return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("%s has no host", raw)}
	}
	u.Fragment = ""
	return u, nil
}

func checkScheme(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &steperr.InvalidInputError{Reason: fmt.Sprintf("%s: only http and https URLs are fetched", u.Redacted())}
	}
	return nil
}

// RobotsDisallowedError is a URL robots.txt forbids docpipe to fetch.
type RobotsDisallowedError struct{ URL string }

func (e *RobotsDisallowedError) Error() string {
	return e.URL + " is disallowed by the site's robots.txt"
}

// HTTPStatusError is a response other than 200 (or 304 to a conditional
// request).
type HTTPStatusError struct {
	URL    string
	Status int
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// Fetch GETs u after checking robots.txt. With prev (an earlier copy of
// the same URL) the request is conditional on its ETag and Last-Modified,
// and a 304 answer returns prev's body marked NotModified.
func (f *Fetcher) Fetch(ctx context.Context, u *url.URL, prev *Page) (Page, error) {
	if err := checkScheme(u); err != nil {
		return Page{}, err
	}
	ok, err := f.allowed(ctx, u)
	if err != nil {
		return Page{}, err
	}
	if !ok {
		return Page{}, &RobotsDisallowedError{URL: u.String()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Page{}, err
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.5,*/*;q=0.1")
	if prev != nil {
		if etag := prev.Header.Get("ETag"); etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		if lm := prev.Header.Get("Last-Modified"); lm != "" {
			req.Header.Set("If-Modified-Since", lm)
		}
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return Page{}, err
	}
	defer resp.Body.Close()
	page := Page{URL: resp.Request.URL.String(), Status: resp.StatusCode, Header: resp.Header, Fetched: time.Now().UTC()}
	switch {
	case resp.StatusCode == http.StatusNotModified && prev != nil:
		page.Body, page.NotModified = prev.Body, true
		page.Status, page.Header = prev.Status, mergeHeader(prev.Header, resp.Header)
		return page, nil
	case resp.StatusCode != http.StatusOK:
		return page, &HTTPStatusError{URL: u.String(), Status: resp.StatusCode}
	}
	page.Body, err = readCapped(resp.Body, f.maxBytes)
	if err != nil {
		return page, fmt.Errorf("%s: %w", u, err)
	}
	return page, nil
}

// mergeHeader is the earlier response's header updated by a 304's
// (RFC 9111: the 304 carries the validators to store).
func mergeHeader(old, fresh http.Header) http.Header {
	h := old.Clone()
	for _, k := range []string{"ETag", "Last-Modified", "Date", "Cache-Control", "Expires"} {
		if v := fresh.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	return h
}

func readCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("page is over the limit of %d bytes", limit)}
	}
	return b, nil
}

// robotsBytes bounds a robots.txt file (Google reads the first 500 KiB).
const robotsBytes = 512 << 10

// allowed fetches and caches the host's robots.txt and tests u against it
// for docpipe's user agent. As RFC 9309 says, a missing file (4xx) allows
// everything and an unreachable one (5xx) nothing.
func (f *Fetcher) allowed(ctx context.Context, u *url.URL) (bool, error) {
	origin := u.Scheme + "://" + u.Host
	f.mu.Lock()
	rd, ok := f.robots[origin]
	f.mu.Unlock()
	if !ok {
		var err error
		if rd, err = f.fetchRobots(ctx, origin); err != nil {
			return false, err
		}
		f.mu.Lock()
		f.robots[origin] = rd
		f.mu.Unlock()
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return rd.TestAgent(path, f.userAgent), nil
}

func (f *Fetcher) fetchRobots(ctx context.Context, origin string) (*robotstxt.RobotsData, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/robots.txt", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", f.userAgent)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("robots.txt: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, robotsBytes))
	if err != nil {
		return nil, fmt.Errorf("robots.txt: %w", err)
	}
	return robotstxt.FromStatusAndBytes(resp.StatusCode, body)
}
