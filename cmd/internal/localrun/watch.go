package localrun

import (
	"context"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// Watched is a workflow a Watcher follows.
type Watched struct {
	File     string
	Workflow pipeline.Workflow
	Ended    bool // its run ended: this reading is its last
}

// Watcher follows how far workflows are, read from their step items —
// the same numbers `docpipe status` reports — every interval, and hands
// each reading to report. Reading is its job; showing is report's.
type Watcher struct {
	repo    *pipeline.Repository
	report  func(Watched, pipeline.StepProgress)
	mu      sync.Mutex
	watched map[string]*Watched
	stop    chan struct{}
	stopped sync.Once
	wg      sync.WaitGroup
}

// Watch starts a Watcher; Stop ends it.
func Watch(repo *pipeline.Repository, every time.Duration, report func(Watched, pipeline.StepProgress)) *Watcher {
	w := &Watcher{repo: repo, report: report, watched: map[string]*Watched{}, stop: make(chan struct{})}
	w.wg.Add(1)
	go w.loop(every)
	return w
}

func (w *Watcher) loop(every time.Duration) {
	defer w.wg.Done()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			w.poll()
			return
		case <-tick.C:
			w.poll()
		}
	}
}

func (w *Watcher) poll() {
	w.mu.Lock()
	ws := make([]Watched, 0, len(w.watched))
	for _, t := range w.watched {
		ws = append(ws, *t)
	}
	w.mu.Unlock()
	for _, t := range ws {
		prog, err := w.repo.GetProgress(context.Background(), t.Workflow.ID)
		if err != nil {
			continue
		}
		w.report(t, prog)
		if t.Ended {
			// Shown in its final state: stop reading it, so a long batch
			// of documents costs reads only for those still running.
			w.mu.Lock()
			delete(w.watched, t.Workflow.ID)
			w.mu.Unlock()
		}
	}
}

// Add follows a workflow from now on.
func (w *Watcher) Add(file string, wf pipeline.Workflow) {
	w.mu.Lock()
	w.watched[wf.ID] = &Watched{File: file, Workflow: wf}
	w.mu.Unlock()
}

// End marks a workflow's run ended: it is read once more, then dropped.
func (w *Watcher) End(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t := w.watched[id]; t != nil {
		t.Ended = true
	}
}

// Stop reads every workflow once more and stops.
func (w *Watcher) Stop() {
	w.stopped.Do(func() {
		close(w.stop)
		w.wg.Wait()
	})
}
