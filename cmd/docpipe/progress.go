package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/docpipe/docpipe/pipeline"
)

// progress shows how far each running document is, read from the table's
// step item — the same numbers `docpipe status` reports. On a terminal it
// draws one bar per document (mpb: concurrent bars that redraw in place
// without fighting over the cursor); elsewhere it logs one line per step
// change, which stays readable in CI logs and files.
type progress interface {
	Track(file string, wf pipeline.Workflow)
	Done(workflowID string)
	Stop()
}

func newProgress(w io.Writer, mode string, repo *pipeline.Repository) progress {
	if mode == "auto" {
		mode = "log"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			mode = "bars"
		}
	}
	switch mode {
	case "none":
		return noProgress{}
	case "bars":
		return newBarProgress(w, repo)
	}
	return newLogProgress(w, repo)
}

type noProgress struct{}

func (noProgress) Track(string, pipeline.Workflow) {}
func (noProgress) Done(string)                     {}
func (noProgress) Stop()                           {}

// poller refreshes tracked workflows from the table at a fixed interval.
type poller struct {
	repo    *pipeline.Repository
	mu      sync.Mutex
	tracked map[string]*tracked
	stop    chan struct{}
	stopped sync.Once
	wg      sync.WaitGroup
	onPoll  func(t *tracked, p pipeline.StepProgress)
}

type tracked struct {
	file string
	wf   pipeline.Workflow
	last string // last reported step summary
	bar  *mpb.Bar
	step string
	done bool
}

func newPoller(repo *pipeline.Repository, onPoll func(*tracked, pipeline.StepProgress)) *poller {
	p := &poller{repo: repo, tracked: map[string]*tracked{}, stop: make(chan struct{}), onPoll: onPoll}
	p.wg.Add(1)
	go p.loop()
	return p
}

func (p *poller) loop() {
	defer p.wg.Done()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			p.poll()
			return
		case <-tick.C:
			p.poll()
		}
	}
}

func (p *poller) poll() {
	p.mu.Lock()
	ts := make([]*tracked, 0, len(p.tracked))
	for _, t := range p.tracked {
		ts = append(ts, t)
	}
	p.mu.Unlock()
	for _, t := range ts {
		p.mu.Lock()
		last := t.done
		p.mu.Unlock()
		prog, err := p.repo.GetProgress(context.Background(), t.wf.ID)
		if err != nil {
			continue
		}
		p.onPoll(t, prog)
		if last {
			// Shown in its final state: stop polling it, so a long batch
			// of documents costs reads only for those still running.
			p.mu.Lock()
			delete(p.tracked, t.wf.ID)
			p.mu.Unlock()
		}
	}
}

func (p *poller) add(t *tracked) {
	p.mu.Lock()
	p.tracked[t.wf.ID] = t
	p.mu.Unlock()
}

func (p *poller) finish(id string) *tracked {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tracked[id]
	if t != nil {
		t.done = true
	}
	return t
}

func (p *poller) halt() {
	p.stopped.Do(func() {
		close(p.stop)
		p.wg.Wait()
	})
}

// currentStep names the step a workflow is in, for display.
func currentStep(prog pipeline.StepProgress) string {
	if prog.Status.Final() {
		return string(prog.Status)
	}
	names := make([]string, 0, len(prog.Steps))
	for name, st := range prog.Steps {
		if st.Status == pipeline.StepInProgress {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "waiting"
	}
	return names[0]
}

// stepText is the current step with its own progress when it records one
// and the time left at the rate so far: "ocr 12/300 pages, ETA 9m20s".
func stepText(prog pipeline.StepProgress) string {
	name := currentStep(prog)
	st, ok := prog.Steps[name]
	if !ok || st.Status != pipeline.StepInProgress || st.Progress == nil || st.Progress.Total <= 0 {
		return name
	}
	text := fmt.Sprintf("%s %d/%d %s", name, st.Progress.Done, st.Progress.Total, st.Progress.Unit)
	if left, ok := st.Progress.Remaining(st.StartedAt); ok {
		text += ", ETA " + left.Round(time.Second).String()
	}
	return text
}

func segmentsFinished(prog pipeline.StepProgress) int {
	return prog.SegmentsDone + prog.SegmentsFailed + prog.SegmentsSkipped
}

// logProgress prints a line whenever a document's step or state changes.
type logProgress struct {
	w  io.Writer
	mu sync.Mutex
	p  *poller
}

func newLogProgress(w io.Writer, repo *pipeline.Repository) *logProgress {
	lp := &logProgress{w: w}
	lp.p = newPoller(repo, lp.update)
	return lp
}

func (l *logProgress) update(t *tracked, prog pipeline.StepProgress) {
	line := fmt.Sprintf("%s: %s", t.file, currentStep(prog)) // a line per change: no counts that tick every second
	if prog.TotalSegments > 0 {
		line += fmt.Sprintf(" (%d/%d segments)", segmentsFinished(prog), prog.TotalSegments)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if line != t.last {
		t.last = line
		fmt.Fprintln(l.w, line)
	}
}

func (l *logProgress) Track(file string, wf pipeline.Workflow) {
	l.p.add(&tracked{file: file, wf: wf})
}

func (l *logProgress) Done(id string) { l.p.finish(id) }
func (l *logProgress) Stop()          { l.p.halt() }

// barProgress draws one bar per document.
type barProgress struct {
	container *mpb.Progress
	p         *poller
	mu        sync.Mutex
	stopOnce  sync.Once
}

func newBarProgress(w io.Writer, repo *pipeline.Repository) *barProgress {
	b := &barProgress{container: mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(150*time.Millisecond))}
	b.p = newPoller(repo, b.update)
	return b
}

func (b *barProgress) Track(file string, wf pipeline.Workflow) {
	t := &tracked{file: file, wf: wf, step: "starting"}
	b.mu.Lock()
	t.bar = b.container.AddBar(0,
		mpb.PrependDecorators(
			decor.Name(shorten(file, 32), decor.WC{W: 33, C: decor.DindentRight}),
			decor.Any(func(decor.Statistics) string {
				b.mu.Lock()
				defer b.mu.Unlock()
				return t.step
			}, decor.WC{W: 44, C: decor.DindentRight}),
		),
		mpb.AppendDecorators(decor.CountersNoUnit("%d/%d segments")),
	)
	b.mu.Unlock()
	b.p.add(t)
}

func (b *barProgress) update(t *tracked, prog pipeline.StepProgress) {
	b.mu.Lock()
	t.step = stepText(prog)
	b.mu.Unlock()
	if prog.TotalSegments > 0 {
		t.bar.SetTotal(int64(prog.TotalSegments), false)
		t.bar.SetCurrent(int64(segmentsFinished(prog)))
	}
	b.p.mu.Lock()
	done := t.done
	b.p.mu.Unlock()
	if done || prog.Status.Final() {
		if prog.Status == pipeline.WorkflowFailed {
			t.bar.Abort(false)
			return
		}
		t.bar.SetTotal(-1, true) // complete the bar at whatever it counted
	}
}

func (b *barProgress) Done(id string) {
	if t := b.p.finish(id); t != nil {
		if prog, err := b.p.repo.GetProgress(context.Background(), id); err == nil {
			b.update(t, prog)
		}
	}
}

func (b *barProgress) Stop() {
	b.stopOnce.Do(func() {
		b.p.halt()
		b.p.mu.Lock()
		for _, t := range b.p.tracked {
			if !t.bar.Completed() && !t.bar.Aborted() {
				t.bar.Abort(false)
			}
		}
		b.p.mu.Unlock()
		b.container.Wait()
	})
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
