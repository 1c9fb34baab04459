package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/docpipe/docpipe/cmd/internal/localrun"
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
		case localrun.IsURL(arg):
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
		if !localrun.IsURL(line) {
			return nil, fmt.Errorf("%s:%d: %q is not a URL", path, n, line)
		}
		urls = append(urls, line)
	}
	return urls, sc.Err()
}
