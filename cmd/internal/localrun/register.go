package localrun

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/docpipe/docpipe/pipeline"
)

// Registering a file has two halves. Staging reads, hashes and copies its
// bytes; committing makes them durable and creates the document and
// workflow items, or finds the document that already holds the same
// bytes. Both run several files at a time: a folder of small files would
// otherwise wait on one copy, one sync and one transaction per file, in a
// row, and the analysis behind them would starve. Commits of files with
// the same bytes still run one after the other, in the folder's order, so
// the first one creates the document and the others find it.
const (
	stagers    = 4  // files read and copied at once
	stageAhead = 16 // staged files waiting for their commit, at most
	committers = 16 // commits in flight: their syncs and transactions are shared
)

// stagedFile is one file on its way through staging; ready is closed once
// st or err is set. A URL is not staged: its fetch is its registration.
type stagedFile struct {
	path  string
	url   bool
	st    pipeline.Staged
	err   error
	ready chan struct{}
}

// registerAll registers files. A registered workflow goes to out as soon as
// it exists, so that processing starts while later files are still being
// copied; outcomes[i] receives file i's registration. It returns the first error that
// stops registration (nil when ctx was cancelled: the caller reports
// that); the staged copies of files not committed by then are removed.
func (rt *Runtime) registerAll(ctx context.Context, files []string, outcomes []*Outcome, out chan<- *Outcome) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending := make(chan *stagedFile, stageAhead)
	go rt.stageFiles(ctx, files, pending)

	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		cancel()
	}
	slots := make(chan struct{}, committers)
	// previous holds, per content, the commit the next file with that
	// content waits for.
	previous := map[string]chan struct{}{}
	i := -1
	for s := range pending {
		i++
		<-s.ready
		if ctx.Err() != nil {
			rt.discard(ctx, s)
			continue // drain: every staged copy is removed
		}
		if s.url {
			reg, err := rt.registerURL(ctx, s.path)
			if !rt.registered(ctx, i, s.path, reg, err, outcomes, out) {
				fail(err)
			}
			continue
		}
		if s.err != nil {
			fail(s.err)
			continue
		}
		sum := s.st.SHA256()
		before, done := previous[sum], make(chan struct{})
		previous[sum] = done
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			rt.discard(ctx, s)
			close(done)
			continue
		}
		wg.Add(1)
		go func(i int, s *stagedFile) {
			defer wg.Done()
			defer func() { <-slots }()
			defer close(done)
			if before != nil {
				<-before
			}
			if ctx.Err() != nil {
				rt.discard(ctx, s)
				return
			}
			reg, err := rt.o.Ingester.Commit(ctx, s.st)
			if !rt.registered(ctx, i, s.path, reg, err, outcomes, out) {
				fail(err)
			}
		}(i, s)
	}
	wg.Wait()
	return firstErr
}

// registered records file i's registration in outcomes and sends it on out.
// It returns false when err stops registration.
func (rt *Runtime) registered(ctx context.Context, i int, path string, reg pipeline.Registration, err error, outcomes []*Outcome, out chan<- *Outcome) bool {
	if reason, ok := notProcessedReason(err); ok {
		outcomes[i] = &Outcome{File: path, NotProcessed: reason}
		return true
	}
	if err != nil {
		return ctx.Err() != nil // an error of a cancelled registration is the cancellation
	}
	outcomes[i] = &Outcome{File: path, Registration: reg}
	select {
	case out <- outcomes[i]:
	case <-ctx.Done():
	}
	return true
}

// discard removes a staged copy that will not be committed.
func (rt *Runtime) discard(ctx context.Context, s *stagedFile) {
	if s.err == nil && !s.url {
		rt.o.Ingester.Discard(ctx, s.st)
	}
}

// stageFiles stages files in order, stagers at a time, and sends each on
// pending in file order once its staging has begun. It closes pending when
// every file is sent or ctx is done; a file whose staging began but could
// not be sent is discarded here.
func (rt *Runtime) stageFiles(ctx context.Context, files []string, pending chan<- *stagedFile) {
	defer close(pending)
	sem := make(chan struct{}, stagers)
	for _, path := range files {
		s := &stagedFile{path: path, url: IsURL(path), ready: make(chan struct{})}
		if s.url {
			close(s.ready)
		} else {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				defer func() { <-sem }()
				defer close(s.ready)
				s.st, s.err = rt.stage(ctx, path)
			}()
		}
		select {
		case pending <- s:
		case <-ctx.Done():
			<-s.ready
			rt.discard(ctx, s)
			return
		}
	}
}

// stage copies and hashes one local file under a new document id.
func (rt *Runtime) stage(ctx context.Context, path string) (pipeline.Staged, error) {
	file, err := os.Open(path)
	if err != nil {
		return pipeline.Staged{}, err
	}
	defer file.Close()
	abs, _ := filepath.Abs(path)
	return rt.o.Ingester.Stage(ctx, pipeline.IngestRequest{
		ProjectID: rt.o.Project, FileName: filepath.Base(path), FileURI: "file://" + abs,
		Body: file, Reuse: true,
		Pipeline: rt.o.Pipeline.Name, PipelineVersion: rt.o.Pipeline.Version, NoCache: rt.o.NoCache,
	})
}
