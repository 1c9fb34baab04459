package web

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Limits bound a crawl.
type Limits struct {
	// Depth is how many links away from the start page to follow on the
	// same host; 0 fetches the start page only.
	Depth int
	// MaxPages bounds the pages kept (default 100).
	MaxPages int
	// MaxBytes bounds the bytes of all pages together (default 64 MiB).
	MaxBytes int64
	// Timeout bounds the whole crawl (default 5 minutes).
	Timeout time.Duration
}

// Defaults for Limits' zero fields.
const (
	DefaultMaxPages = 100
	DefaultMaxBytes = 64 << 20
	DefaultTimeout  = 5 * time.Minute
)

func (l Limits) withDefaults() Limits {
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	l.Depth = max(l.Depth, 0)
	return l
}

// Result is what a crawl fetched, in the order it was fetched (breadth
// first), and what it left out.
type Result struct {
	Pages []Page
	// Skipped are linked pages that were not kept, with the reason
	// (robots.txt, HTTP errors, not HTML, a limit reached).
	Skipped []Skip
}

// Skip is a page a crawl did not keep.
type Skip struct {
	URL    string
	Reason string
}

// Crawl fetches start and, breadth first to l.Depth links away, the HTML
// pages it links to on the same host. prev holds earlier copies by URL,
// fetched conditionally. The start page must be fetched; later pages that
// fail are skipped with the reason. Hitting a limit stops the crawl with
// what it has.
func (f *Fetcher) Crawl(ctx context.Context, start *url.URL, l Limits, prev map[string]Page) (Result, error) {
	l = l.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	type item struct {
		u     *url.URL
		depth int
	}
	queue := []item{{start, 0}}
	seen := map[string]bool{start.String(): true}
	var res Result
	var total int64
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if len(res.Pages) >= l.MaxPages {
			res.Skipped = append(res.Skipped, Skip{it.u.String(), fmt.Sprintf("page limit of %d reached", l.MaxPages)})
			continue
		}
		var earlier *Page
		if p, ok := prev[it.u.String()]; ok {
			earlier = &p
		}
		page, err := f.Fetch(ctx, it.u, earlier)
		if err != nil {
			if it.depth == 0 {
				return res, err
			}
			if ctx.Err() != nil {
				res.Skipped = append(res.Skipped, Skip{it.u.String(), fmt.Sprintf("crawl time limit of %s reached", l.Timeout)})
				continue
			}
			res.Skipped = append(res.Skipped, Skip{it.u.String(), err.Error()})
			continue
		}
		if it.depth > 0 && !page.IsHTML() {
			res.Skipped = append(res.Skipped, Skip{it.u.String(), "not an HTML page (" + page.ContentType() + ")"})
			continue
		}
		if total+int64(len(page.Body)) > l.MaxBytes {
			if it.depth == 0 {
				return res, fmt.Errorf("%s: %w", it.u, errTooLarge(l.MaxBytes))
			}
			res.Skipped = append(res.Skipped, Skip{it.u.String(), fmt.Sprintf("byte limit of %d reached", l.MaxBytes)})
			continue
		}
		total += int64(len(page.Body))
		res.Pages = append(res.Pages, page)
		if it.depth >= l.Depth || !page.IsHTML() {
			continue
		}
		base, _ := url.Parse(page.URL)
		for _, link := range Links(base, page.Body) {
			if link.Host != start.Host || seen[link.String()] {
				continue
			}
			seen[link.String()] = true
			queue = append(queue, item{link, it.depth + 1})
		}
	}
	return res, nil
}

func errTooLarge(limit int64) error {
	return fmt.Errorf("page is over the crawl's byte limit of %d", limit)
}

// Links returns the http and https links of an HTML page, resolved
// against base (or the page's <base href>), without fragments, in order,
// once each.
func Links(base *url.URL, body []byte) []*url.URL {
	var out []*url.URL
	seen := map[string]bool{}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		a := atom.Lookup(name)
		if (a != atom.A && a != atom.Base) || !hasAttr {
			continue
		}
		var href string
		rel := ""
		for {
			k, v, more := z.TagAttr()
			switch string(k) {
			case "href":
				href = string(v)
			case "rel":
				rel = string(v)
			}
			if !more {
				break
			}
		}
		ref, err := url.Parse(href)
		if href == "" || err != nil {
			continue
		}
		if a == atom.Base {
			if b := base.ResolveReference(ref); checkScheme(b) == nil {
				base = b
			}
			continue
		}
		if rel == "nofollow" {
			continue
		}
		u := base.ResolveReference(ref)
		u.Fragment, u.RawFragment = "", ""
		if checkScheme(u) != nil || seen[u.String()] {
			continue
		}
		seen[u.String()] = true
		out = append(out, u)
	}
}
