package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/dashboard"
	"github.com/docpipe/docpipe/cmd/internal/localrun"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

func init() { addCommand(newServeCmd) }

func newServeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Web dashboard and JSON API: upload documents and follow analyses",
		Long: `Serve the dashboard: analyses in progress with live progress, failures
with their reasons and a re-run button, projects and their documents, one
analysis's steps, segments, summary, graph and audit trail, and uploads.
Every asset is built in; the pages reach no other host.

On this machine (--home) it also processes what is uploaded, like
` + "`docpipe work`" + `, after any ` + "`docpipe run`" + ` on the same home has finished. On AWS
(--table, --bucket, --state-machine) it reads DynamoDB and S3 and starts
executions on Step Functions, as ` + "`docpipe ingest`" + ` does.

It listens on 127.0.0.1 unless told otherwise, and then answers only
requests addressed to localhost or a loopback address. Any other address
needs a token of at least 16 characters (--token or ` + dashboard.EnvToken + `), sent as
"Authorization: Bearer TOKEN" or set as a cookie by opening /?token=TOKEN
once. With --users FILE each person has a token of their own instead (or
beside the shared one): the file lists name, the SHA-256 of the token
(printf %s "$TOKEN" | sha256sum) and groups, so a review action is taken
under that person's verified name, and a group's review only by its
members; a name typed with the shared token is marked unverified in the
audit trail. Off loopback, serve HTTPS with --tls-cert and --tls-key, or put a TLS
proxy in front: over plain HTTP the token crosses the network readable.`,
		Example: `  docpipe serve
  docpipe serve --home /tmp/dp --listen 127.0.0.1:9000
  DOCPIPE_TOKEN=$(openssl rand -hex 24) docpipe serve --listen 0.0.0.0:8443 --tls-cert cert.pem --tls-key key.pem
  docpipe serve --table T --bucket B --state-machine ARN`,
		Args: exactArgs(0, "no arguments"),
	}
	f := newRunFlags(a, cmd.Flags())
	listen := cmd.Flags().String("listen", "127.0.0.1:8080", "address to listen on (host:port)")
	var token string
	stringFromEnv(cmd.Flags(), &token, "token", dashboard.EnvToken, "token every request must carry; required off loopback")
	usersFile := cmd.Flags().String("users", "", "a users file (name, token_sha256, groups): each person signs in with a token of their own and reviews under their name and groups")
	var tlsFiles tlsFiles
	cmd.Flags().StringVar(&tlsFiles.cert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain); needs --tls-key")
	cmd.Flags().StringVar(&tlsFiles.key, "tls-key", "", "the PEM private key of --tls-cert")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		auth := serveAuth{token: token}
		if *usersFile != "" {
			users, err := dashboard.LoadUsers(*usersFile)
			if err != nil {
				return usageError{err}
			}
			auth.users = users
		}
		if err := dashboard.CheckListen(*listen, token, auth.users != nil); err != nil {
			return usageError{err}
		}
		if (tlsFiles.cert == "") != (tlsFiles.key == "") {
			return usageError{errors.New("--tls-cert and --tls-key go together")}
		}
		return serve(cmd.Context(), f, *listen, auth, tlsFiles, nil)
	}
	return cmd
}

// serveAuth is who may use the dashboard: holders of the shared token,
// and the people of a users file with their own tokens.
type serveAuth struct {
	token string
	users *dashboard.Users
}

// tlsFiles are the certificate and key of an HTTPS dashboard; empty
// serves plain HTTP.
type tlsFiles struct{ cert, key string }

// serve runs the dashboard until ctx ends. ready, when set, receives the
// address it listens on (tests listen on port 0).
func serve(ctx context.Context, f *runFlags, listen string, auth serveAuth, tls tlsFiles, ready func(addr string)) error {
	logger := slog.New(slog.NewTextHandler(f.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var worker func(context.Context) error
	opts := dashboard.Options{Token: auth.token, Users: auth.users, Project: f.project, Logger: logger}
	if f.onAWS() {
		if f.pipeline != "" {
			// Uploads on AWS start on the deployment's state machine.
			return usageErrorf("--pipeline works with serve on this machine only; on AWS apply the pipeline and set it on the project (docpipe project set ID pipeline=NAME@VERSION)")
		}
		ai := awsIngest{app: f.app}
		b, clients, err := ai.open(ctx)
		if err != nil {
			return err
		}
		defer b.Close()
		ig := &pipeline.Ingester{Repo: b.Repo, Blobs: b.Blobs, Definition: pipelinefile.Default(), Bucket: b.Bucket}
		if err := ig.EnsureProject(ctx, f.project, f.project); err != nil {
			return err
		}
		opts.Repo, opts.Blobs = b.Repo, b.Blobs
		opts.Starter = &awsStarter{b: b, clients: clients, ingester: ig, stateMachine: f.stateMachine}
		opts.ReviewCallback = sfn.ReviewCallback{API: clients.SFN}
	} else {
		lp, err := openLocalPipeline(ctx, f, f.stderr)
		if err != nil {
			return err
		}
		defer lp.Close()
		ls := &localStarter{Service: localrun.NewService(lp.runtime(nil)), repo: lp.backend.Repo, locked: make(chan struct{})}
		opts.Repo, opts.Blobs, opts.Starter = lp.backend.Repo, lp.backend.Blobs, ls
		opts.Search = lp.backend.Search
		// Like run and work, serve delivers outcome events while it
		// processes: the backlog first, then each outcome as it commits.
		worker = func(ctx context.Context) error {
			notify := f.notify
			if notify == nil {
				notify = &notifyFlags{}
			}
			stopRelay, err := startRelay(ctx, lp.backend, notify, f.allowPrivate, logger)
			if err != nil {
				return err
			}
			defer stopRelay()
			if err := lp.backend.LockHome(); err != nil {
				if !errors.Is(err, backend.ErrBusy) {
					return err
				}
				logger.Info("waiting for another docpipe process on this home to finish before processing", "home", lp.backend.Home)
				if err := lp.backend.WaitLockHome(ctx); err != nil {
					return nil // stopped while waiting
				}
			}
			close(ls.locked)
			return ls.Serve(ctx)
		}
		opts.OnReviewDecided = ls.ReviewDecided
	}
	srv, err := dashboard.New(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	scheme := "http"
	if tls.cert != "" {
		scheme = "https"
	}
	fmt.Fprintf(f.stdout, "docpipe dashboard on %s://%s/\n", scheme, ln.Addr())
	if ready != nil {
		ready(ln.Addr().String())
	}
	g, gctx := errgroup.WithContext(ctx)
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second, // request bodies: dashboard.MinBodyRate
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return gctx },
	}
	g.Go(func() error {
		serveOn := hs.Serve
		if tls.cert != "" {
			serveOn = func(ln net.Listener) error { return hs.ServeTLS(ln, tls.cert, tls.key) }
		}
		if err := serveOn(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error { srv.Run(gctx); return nil })
	if worker != nil {
		g.Go(func() error { return worker(gctx) })
	}
	g.Go(func() error {
		<-gctx.Done()
		shut, cancel := context.WithTimeout(context.WithoutCancel(gctx), 5*time.Second)
		defer cancel()
		return hs.Shutdown(shut)
	})
	err = g.Wait()
	if ctx.Err() != nil {
		return nil // interrupted: a normal way to stop a server
	}
	return err
}

// localStarter is the dashboard's way into the local runtime: uploads go
// to its Service, and re-runs once this process holds the home lock (a
// `docpipe run` on the same home finishes first).
type localStarter struct {
	*localrun.Service
	repo   *pipeline.Repository
	locked chan struct{} // closed once the home lock is held
}

func (s *localStarter) Rerun(ctx context.Context, workflowID string) ([]string, error) {
	select {
	case <-s.locked:
	default:
		return nil, dashboard.ErrBusy
	}
	reg, reset, err := prepareRerun(ctx, s.repo, workflowID)
	if err != nil || len(reset) == 0 {
		return reset, err
	}
	return reset, s.Enqueue(ctx, reg)
}

var _ dashboard.Backfiller = (*localStarter)(nil)

// Backfill moves the project's documents onto name@version (the
// dashboard's backfill button): their workflows are created here and
// queued on the local runtime, through its admission like any other.
func (s *localStarter) Backfill(ctx context.Context, project, name string, version int) (int, error) {
	select {
	case <-s.locked:
	default:
		return 0, dashboard.ErrBusy
	}
	def, err := s.repo.Definition(ctx, name, version)
	if err != nil {
		return 0, err
	}
	items, err := s.repo.PlanBackfill(ctx, project, name, version, pipeline.BackfillFilter{})
	if err != nil {
		return 0, err
	}
	if err := s.repo.CreateBackfillWorkflows(ctx, items, version, def.Stages, false); err != nil {
		return 0, err
	}
	for _, it := range items {
		if err := s.Enqueue(ctx, pipeline.Registration{Workflow: *it.Target}); err != nil {
			return 0, err
		}
	}
	return len(items), nil
}

// awsStarter registers uploads in DynamoDB and S3 and starts them on Step
// Functions, as `docpipe ingest` does on AWS.
type awsStarter struct {
	b            *backend.Backend
	clients      backend.AWSClients
	ingester     *pipeline.Ingester
	stateMachine string
}

func (s *awsStarter) Upload(ctx context.Context, project, fileName string, body io.Reader) (pipeline.Registration, error) {
	if err := s.ingester.EnsureProject(ctx, project, project); err != nil {
		return pipeline.Registration{}, err
	}
	reg, err := s.ingester.Register(ctx, pipeline.IngestRequest{
		ProjectID: project, FileName: fileName, FileURI: "upload:" + fileName, Body: body, Reuse: true,
	})
	if err != nil || reg.Workflow.Status.Final() {
		return reg, err
	}
	ex := &sfn.Executor{API: s.clients.SFN, StateMachineARN: s.stateMachine, Repo: s.b.Repo}
	_, err = ex.Start(ctx, s.ingester.ExecutionInput(reg))
	return reg, err
}

func (s *awsStarter) Rerun(ctx context.Context, workflowID string) ([]string, error) {
	reset, _, err := rerunOnAWS(ctx, s.b, s.clients, s.stateMachine, workflowID, rerunScope{})
	return reset, err
}
