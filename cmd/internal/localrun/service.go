package localrun

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// ReviewPassEvery is how often a Service looks for reviews decided
// elsewhere (docpipe review on the same home) and for overdue ones.
const ReviewPassEvery = time.Minute

// Service is the runtime behind a long-running process (docpipe serve):
// it registers uploads and runs them, re-runs what it is given, and keeps
// `docpipe work`'s review duty, on the same scheduler as every other
// command.
type Service struct {
	rt      *Runtime
	queue   chan Job
	decided chan struct{} // a review was decided here: resume its workflow

	mu      sync.Mutex
	running map[string]bool // workflows started here and not ended
}

// NewService makes a Service of rt; Serve runs it.
func NewService(rt *Runtime) *Service {
	return &Service{rt: rt, queue: make(chan Job, 1024), decided: make(chan struct{}, 1), running: map[string]bool{}}
}

// Upload registers a document in project and queues its workflow unless
// it has ended before (the same bytes were processed already).
func (s *Service) Upload(ctx context.Context, project, fileName string, body io.Reader) (pipeline.Registration, error) {
	ig := s.rt.o.Ingester
	if err := ig.EnsureProject(ctx, project, project); err != nil {
		return pipeline.Registration{}, err
	}
	reg, err := ig.Register(ctx, pipeline.IngestRequest{
		ProjectID: project, FileName: fileName, FileURI: "upload:" + fileName, Body: body, Reuse: true,
		Pipeline: s.rt.o.Pipeline.Name, PipelineVersion: s.rt.o.Pipeline.Version,
	})
	if err != nil {
		return reg, err
	}
	if !reg.Workflow.Status.Final() {
		err = s.Enqueue(ctx, reg)
	}
	return reg, err
}

// Enqueue queues a registered workflow to run.
func (s *Service) Enqueue(ctx context.Context, reg pipeline.Registration) error {
	j := Job{File: reg.Workflow.FileName, Workflow: reg.Workflow, Size: reg.Document.Size}
	select {
	case s.queue <- j:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ReviewDecided asks for a review pass: a decision made in the dashboard
// resumes its parked workflow without waiting for the next tick.
func (s *Service) ReviewDecided(pipeline.Review) {
	select {
	case s.decided <- struct{}{}:
	default: // a pass is already due
	}
}

// Serve takes up what is unfinished, then runs what is queued until ctx
// ends, and waits for the workflows it started. The caller holds the
// home.
func (s *Service) Serve(ctx context.Context) error {
	defer s.rt.Wait() // runs record their outcome in the table
	list, err := s.rt.Unfinished(ctx)
	if err != nil {
		return err
	}
	if err := s.rt.takeUp(ctx, list); err != nil {
		return err
	}
	for _, p := range list {
		s.start(ctx, resumeJob(p))
	}
	// Reviews decided here, in another process or not at all (overdue):
	// a pass now, on every decision made in the dashboard, and each
	// ReviewPassEvery.
	s.reviewPass(ctx)
	tick := time.NewTicker(ReviewPassEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case j := <-s.queue:
			s.start(ctx, j)
		case <-s.decided:
			s.reviewPass(ctx)
		case <-tick.C:
			s.reviewPass(ctx)
		}
	}
}

// start schedules one workflow unless it is running already.
func (s *Service) start(ctx context.Context, j Job) {
	id := j.Workflow.ID
	s.mu.Lock()
	if s.running[id] {
		s.mu.Unlock()
		return
	}
	s.running[id] = true
	s.mu.Unlock()
	ended := func(Ended) {
		s.mu.Lock()
		delete(s.running, id)
		s.mu.Unlock()
	}
	if err := s.rt.Start(ctx, j, ended); err != nil {
		ended(Ended{Err: err})
		if ctx.Err() == nil {
			s.rt.o.Logger.Warn("scheduling", "workflow", id, "error", err)
		}
	}
}

// reviewPass is `docpipe work`'s review duty inside a Service: overdue
// reviews are announced, escalated or timed out, and parked workflows
// whose review is decided run again.
func (s *Service) reviewPass(ctx context.Context) {
	parked, err := s.rt.ParkedReviews(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.rt.o.Logger.Warn("review pass", "error", err)
		}
		return
	}
	for _, p := range parked {
		s.start(ctx, resumeJob(p))
	}
}
