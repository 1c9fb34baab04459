// Package dashboard is `docpipe serve`: server-rendered pages and a JSON
// API over the pipeline repository and blob store. The handlers know
// neither SQLite nor DynamoDB: they read through *pipeline.Repository and
// blob.Store and start work through a Starter, which the command wires to
// the embedded engine or to Step Functions.
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/review"
)

// Starter turns uploads into analyses and re-runs failed ones. The local
// implementation queues them on the in-process engine; the AWS one starts
// Step Functions executions.
type Starter interface {
	// Upload registers one file of the project and starts its analysis.
	// fileName is metadata only: it never becomes part of a blob key.
	Upload(ctx context.Context, project, fileName string, body io.Reader) (pipeline.Registration, error)
	// Rerun readies a finished analysis for a re-run of what failed and
	// starts it. It returns the steps reset; none means nothing to re-run.
	Rerun(ctx context.Context, workflowID string) ([]string, error)
}

// ErrBusy is what a Starter returns when it cannot take work right now;
// the API answers 409.
var ErrBusy = errors.New("the server cannot start work now: another docpipe process holds the state home")

// Options configure a Server.
type Options struct {
	Repo    *pipeline.Repository
	Blobs   blob.Store
	Starter Starter
	// Project is where uploads go and which project the projects page
	// opens first.
	Project string
	// MaxUploadBytes bounds one uploaded file (0: the limit `docpipe run`
	// applies, extract.DefaultLimits.MaxFileBytes).
	MaxUploadBytes int64
	// Token, when set, is required on every request (see security.go);
	// at least MinTokenLength characters. Without one, only requests
	// addressed to localhost or a loopback address are answered.
	Token string
	// Users, when set, lets each person sign in with a token of their own
	// (LoadUsers): their review actions are taken under their name and
	// groups, verified. The shared Token may stay beside it.
	Users *Users
	// BodyGrace is how long a request body may take beyond what
	// MinBodyRate allows for its size (0: 30 s); a body trickled slower
	// is cut off, so it cannot hold a connection open indefinitely.
	BodyGrace time.Duration
	// MaxLiveSubscribers bounds the live streams open at once (0:
	// DefaultMaxLiveSubscribers); past it /api/events answers 503.
	MaxLiveSubscribers int
	// PollInterval is how often the live stream reads the status index
	// (0: one second), whatever the number of browsers.
	PollInterval time.Duration
	Logger       *slog.Logger
	// ReviewCallback answers the Step Functions task a decided review
	// holds the token of (nil on the embedded engine).
	ReviewCallback review.TaskCallback
	// OnReviewDecided, when set, hears of each decision made here: the
	// local engine resumes the parked workflow.
	OnReviewDecided func(pipeline.Review)
	// Search is the full-text index the search page queries; nil on AWS.
	Search Searcher
}

// MinBodyRate is the slowest upload a request body may average.
const MinBodyRate = 16 << 10 // bytes per second

// bodyDeadline gives a request body until BodyGrace plus its size at
// MinBodyRate (the upload limit when the size is not declared).
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			size := r.ContentLength
			if size < 0 {
				size = s.opts.MaxUploadBytes
			}
			d := s.opts.BodyGrace + time.Duration(size/MinBodyRate)*time.Second
			// Not every ResponseWriter supports deadlines (tests' recorders).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		next.ServeHTTP(w, r)
	})
}

// DefaultMaxLiveSubscribers bounds the live streams: each holds a
// connection, a file descriptor and a goroutine for as long as a page is
// open.
const DefaultMaxLiveSubscribers = 256

// Server serves the dashboard.
type Server struct {
	opts  Options
	live  *broker
	pages *pageSet
}

// New checks o and returns a server.
func New(o Options) (*Server, error) {
	if o.Repo == nil || o.Blobs == nil || o.Starter == nil {
		return nil, errors.New("dashboard: Repo, Blobs and Starter are required")
	}
	if err := CheckToken(o.Token); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	if o.Project == "" {
		o.Project = "default"
	}
	if o.BodyGrace <= 0 {
		o.BodyGrace = 30 * time.Second
	}
	if o.MaxLiveSubscribers <= 0 {
		o.MaxLiveSubscribers = DefaultMaxLiveSubscribers
	}
	if o.MaxUploadBytes <= 0 {
		o.MaxUploadBytes = extract.DefaultLimits.MaxFileBytes
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	pages, err := loadPages()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, pages: pages}
	s.live = newBroker(func(ctx context.Context) (Snapshot, error) { return s.snapshot(ctx) }, o.MaxLiveSubscribers)
	return s, nil
}

// Run drives the live stream's single poller until ctx ends.
func (s *Server) Run(ctx context.Context) { s.live.run(ctx, s.opts.PollInterval) }

// Handler returns every route behind the security layers: headers on every
// response, the token when one is set, and cross-origin protection for
// state-changing requests.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", assetHandler())

	mux.HandleFunc("GET /{$}", s.overviewPage)
	mux.HandleFunc("GET /failed", s.failedPage)
	mux.HandleFunc("GET /projects", s.projectsPage)
	mux.HandleFunc("GET /analyses/{id}", s.analysisPage)
	mux.HandleFunc("GET /analyses/{id}/graph.svg", s.graphSVG)
	mux.HandleFunc("GET /pipelines", s.pipelinesPage)
	mux.HandleFunc("GET /pipelines/{name}", s.pipelinePage)
	mux.HandleFunc("GET /upload", s.uploadPage)
	mux.HandleFunc("GET /reviews", s.reviewsPage)
	mux.HandleFunc("GET /reviews/{id}", s.reviewPage)
	mux.HandleFunc("GET /search", s.searchPage)

	mux.HandleFunc("GET /api/analyses", s.apiList)
	mux.HandleFunc("GET /api/analyses/{id}", s.apiAnalysis)
	mux.HandleFunc("GET /api/analyses/{id}/segments", s.apiSegments)
	mux.HandleFunc("GET /api/analyses/{id}/segments/{index}", s.apiSegment)
	mux.HandleFunc("GET /api/analyses/{id}/segments/{index}/image", s.apiSegmentImage)
	mux.HandleFunc("GET /api/analyses/{id}/summary", s.apiSummary)
	mux.HandleFunc("GET /api/projects", s.apiProjects)
	mux.HandleFunc("GET /api/pipelines", s.apiPipelines)
	mux.HandleFunc("GET /api/pipelines/{name}", s.apiPipeline)
	mux.HandleFunc("GET /api/pipelines/{name}/versions/{version}", s.apiPipelineVersion)
	mux.HandleFunc("GET /api/pipelines/{name}/analyses", s.apiPipelineAnalyses)
	mux.HandleFunc("GET /api/pipelines/{name}/versions/{version}/backfill", s.apiBackfillPreview)
	mux.HandleFunc("POST /api/pipelines/{name}/versions/{version}/backfill", s.apiBackfill)
	mux.HandleFunc("POST /api/uploads", s.apiUpload)
	mux.HandleFunc("POST /api/analyses/{id}/rerun", s.apiRerun)
	mux.HandleFunc("GET /api/events", s.apiEvents)
	mux.HandleFunc("GET /api/reviews", s.apiReviews)
	mux.HandleFunc("GET /api/reviews/{id}", s.apiReview)
	mux.HandleFunc("POST /api/reviews/{id}/{action}", s.apiReviewAction)
	// Unknown API routes answer in JSON too; a known route asked with the
	// wrong method gets 405 and the methods it allows.
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "/api/" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
			return
		}
		writeError(w, http.StatusNotFound, "no such API route: "+r.Method+" "+r.URL.Path)
	})

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, "cross-site request refused")
	}))
	return securityHeaders(requireToken(s.opts.Token, s.opts.Users, s.bodyDeadline(cop.Handler(mux))))
}
