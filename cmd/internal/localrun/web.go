package localrun

import (
	"context"
	"errors"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/web"
)

// IsURL tells a URL source from a path: it has a scheme.
func IsURL(arg string) bool {
	scheme, _, ok := strings.Cut(arg, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, "/.")
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

// registerURL fetches a URL (a crawl with Options.Crawl.Depth) and
// registers it.
func (rt *Runtime) registerURL(ctx context.Context, rawURL string) (pipeline.Registration, error) {
	if rt.web == nil {
		rt.web = web.NewFetcher(rt.o.Fetch)
	}
	src := &web.Source{Ingester: rt.o.Ingester, Fetcher: rt.web, Limits: rt.o.Crawl}
	got, err := src.Register(ctx, pipeline.IngestRequest{ProjectID: rt.o.Project, Pipeline: rt.o.Pipeline.Name, PipelineVersion: rt.o.Pipeline.Version}, rawURL)
	if err != nil {
		if ctx.Err() != nil {
			return pipeline.Registration{}, ctx.Err()
		}
		return pipeline.Registration{}, &fetchError{err}
	}
	if rt.o.LeftOut != nil {
		for _, s := range got.Skipped {
			rt.o.LeftOut(rawURL, s)
		}
	}
	return got.Registration, nil
}
