package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/web"
)

// webFlags bound what run and ingest fetch for URLs.
type webFlags struct {
	depth    int
	maxPages int
	maxBytes int64
	timeout  time.Duration
}

func addWebFlags(fs *pflag.FlagSet) *webFlags {
	w := &webFlags{}
	fs.IntVar(&w.depth, "crawl-depth", 0, "URLs: follow links on the same host this many steps away (0: the page alone); a crawl is one document, a page per segment")
	fs.IntVar(&w.maxPages, "crawl-max-pages", web.DefaultMaxPages, "URLs: pages kept per crawl")
	fs.Int64Var(&w.maxBytes, "crawl-max-bytes", web.DefaultMaxBytes, "URLs: bytes fetched per crawl")
	fs.DurationVar(&w.timeout, "crawl-timeout", web.DefaultTimeout, "URLs: time allowed per crawl")
	return w
}

// isURL tells a URL argument from a path: it has a scheme.
func isURL(arg string) bool {
	scheme, _, ok := strings.Cut(arg, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, "/.")
}

// collectSources splits the command line into files (collectFiles) and
// URLs: arguments with a scheme, and the lines of .urls files (blank
// lines and # comments left out). URLs come after files, in order, once
// each.
func collectSources(args []string) ([]string, []notProcessed, error) {
	var paths, urls []string
	seen := map[string]bool{}
	addURL := func(u string) {
		if !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
	}
	for _, arg := range args {
		switch {
		case isURL(arg):
			addURL(arg)
		case strings.HasSuffix(arg, ".urls"):
			list, err := readURLList(arg)
			if err != nil {
				return nil, nil, err
			}
			for _, u := range list {
				addURL(u)
			}
		default:
			paths = append(paths, arg)
		}
	}
	if len(urls) == 0 {
		return collectFiles(args)
	}
	var files []string
	var skipped []notProcessed
	if len(paths) > 0 {
		var err error
		if files, skipped, err = collectFiles(paths); err != nil {
			return nil, nil, err
		}
	}
	return append(files, urls...), skipped, nil
}

func readURLList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var urls []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !isURL(line) {
			return nil, fmt.Errorf("%s:%d: %q is not a URL", path, n, line)
		}
		urls = append(urls, line)
	}
	return urls, sc.Err()
}

// fetchError is a URL that could not be fetched: reported as not
// processed, like an unreadable file.
type fetchError struct{ err error }

func (e *fetchError) Error() string { return e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }

// notProcessedReason is why a source was not registered, when that is
// the source's fault rather than docpipe's.
func notProcessedReason(err error) (string, bool) {
	var fe *fetchError
	if errors.As(err, &fe) {
		return fe.Error(), true
	}
	return "", false
}

// registerURL fetches a URL (a crawl with --crawl-depth) and registers it.
func (lp *localPipeline) registerURL(ctx context.Context, f *runFlags, rawURL string) (pipeline.Registration, error) {
	w := f.web
	if w == nil {
		w = &webFlags{}
	}
	if lp.web == nil {
		lp.web = web.NewFetcher(web.FetcherOptions{UserAgent: web.UserAgent(buildVersion()), AllowPrivateNetwork: f.allowPrivate})
	}
	src := &web.Source{Ingester: lp.ingester, Fetcher: lp.web, Limits: web.Limits{Depth: w.depth, MaxPages: w.maxPages, MaxBytes: w.maxBytes, Timeout: w.timeout}}
	got, err := src.Register(ctx, pipeline.IngestRequest{ProjectID: f.project, Pipeline: lp.pipeline.name, PipelineVersion: lp.pipeline.version}, rawURL)
	if err != nil {
		if ctx.Err() != nil {
			return pipeline.Registration{}, ctx.Err()
		}
		return pipeline.Registration{}, &fetchError{err}
	}
	for _, s := range got.Skipped {
		fmt.Fprintf(f.stderr, "%s: left out %s: %s\n", rawURL, s.URL, s.Reason)
	}
	return got.Registration, nil
}
