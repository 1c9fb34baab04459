package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/docpipe/docpipe/cmd/internal/localrun"
	"github.com/docpipe/docpipe/pipeline"
)

// progress shows how far each running document is, as a localrun.Watcher
// reads it from the table's step item. On a terminal it
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

// progressEvery is how often a display reads how far its documents are.
const progressEvery = 200 * time.Millisecond

type noProgress struct{}

func (noProgress) Track(string, pipeline.Workflow) {}
func (noProgress) Done(string)                     {}
func (noProgress) Stop()                           {}

// stepText is the current step with its own progress when it records one
// and the time left at the rate so far: "ocr 12/300 pages, ETA 9m20s".
func stepText(prog pipeline.StepProgress) string {
	name := prog.Doing()
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
	w    io.Writer
	mu   sync.Mutex
	last map[string]string // per workflow, the line printed last
	p    *localrun.Watcher
}

func newLogProgress(w io.Writer, repo *pipeline.Repository) *logProgress {
	lp := &logProgress{w: w, last: map[string]string{}}
	lp.p = localrun.Watch(repo, progressEvery, lp.update)
	return lp
}

func (l *logProgress) update(t localrun.Watched, prog pipeline.StepProgress) {
	line := fmt.Sprintf("%s: %s", t.File, prog.Doing()) // a line per change: no counts that tick every second
	if prog.TotalSegments > 0 {
		line += fmt.Sprintf(" (%d/%d segments)", segmentsFinished(prog), prog.TotalSegments)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if line != l.last[t.Workflow.ID] {
		l.last[t.Workflow.ID] = line
		fmt.Fprintln(l.w, line)
	}
	if t.Ended {
		delete(l.last, t.Workflow.ID) // its last reading
	}
}

func (l *logProgress) Track(file string, wf pipeline.Workflow) { l.p.Add(file, wf) }
func (l *logProgress) Done(id string)                          { l.p.End(id) }
func (l *logProgress) Stop()                                   { l.p.Stop() }

// barProgress draws one bar per document.
type barProgress struct {
	container *mpb.Progress
	repo      *pipeline.Repository
	p         *localrun.Watcher
	mu        sync.Mutex
	bars      map[string]*docBar
	stopOnce  sync.Once
}

// docBar is one document's bar and the step text beside it.
type docBar struct {
	bar  *mpb.Bar
	step string
}

func newBarProgress(w io.Writer, repo *pipeline.Repository) *barProgress {
	b := &barProgress{container: mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(150*time.Millisecond)),
		repo: repo, bars: map[string]*docBar{}}
	b.p = localrun.Watch(repo, progressEvery, b.update)
	return b
}

func (b *barProgress) Track(file string, wf pipeline.Workflow) {
	d := &docBar{step: "starting"}
	b.mu.Lock()
	d.bar = b.container.AddBar(0,
		mpb.PrependDecorators(
			decor.Name(shorten(file, 32), decor.WC{W: 33, C: decor.DindentRight}),
			decor.Any(func(decor.Statistics) string {
				b.mu.Lock()
				defer b.mu.Unlock()
				return d.step
			}, decor.WC{W: 44, C: decor.DindentRight}),
		),
		mpb.AppendDecorators(decor.CountersNoUnit("%d/%d segments")),
	)
	b.bars[wf.ID] = d
	b.mu.Unlock()
	b.p.Add(file, wf)
}

func (b *barProgress) update(t localrun.Watched, prog pipeline.StepProgress) {
	b.show(t.Workflow.ID, t.Ended, prog)
}

func (b *barProgress) show(id string, ended bool, prog pipeline.StepProgress) {
	b.mu.Lock()
	d := b.bars[id]
	if d != nil {
		d.step = stepText(prog)
	}
	b.mu.Unlock()
	if d == nil {
		return
	}
	if prog.TotalSegments > 0 {
		d.bar.SetTotal(int64(prog.TotalSegments), false)
		d.bar.SetCurrent(int64(segmentsFinished(prog)))
	}
	if ended || prog.Status.Final() {
		if prog.Status == pipeline.WorkflowFailed {
			d.bar.Abort(false)
			return
		}
		d.bar.SetTotal(-1, true) // complete the bar at whatever it counted
	}
}

func (b *barProgress) Done(id string) {
	b.p.End(id)
	if prog, err := b.repo.GetProgress(context.Background(), id); err == nil {
		b.show(id, true, prog)
	}
}

func (b *barProgress) Stop() {
	b.stopOnce.Do(func() {
		b.p.Stop()
		b.mu.Lock()
		for _, d := range b.bars {
			if !d.bar.Completed() && !d.bar.Aborted() {
				d.bar.Abort(false)
			}
		}
		b.mu.Unlock()
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
