package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// progressView is one analysis as the pages and the API show it: the step
// item's counters with what a progress bar needs.
type progressView struct {
	WorkflowID  string `json:"workflow_id"`
	ProjectID   string `json:"project_id"`
	FileName    string `json:"file_name"`
	Status      string `json:"status"`
	CurrentStep string `json:"current_step"`
	// FailedStep names the step a failed analysis failed in.
	FailedStep      string `json:"failed_step,omitempty"`
	SegmentsTotal   int    `json:"segments_total"`
	SegmentsDone    int    `json:"segments_done"`
	SegmentsFailed  int    `json:"segments_failed"`
	SegmentsSkipped int    `json:"segments_skipped"`
	Percent         int    `json:"percent"`
	// The running step's own progress, when it records one: done of total
	// units, its percentage and the time left at the rate so far ("" until
	// there is a rate).
	StepDone    int    `json:"step_done,omitempty"`
	StepTotal   int    `json:"step_total,omitempty"`
	StepUnit    string `json:"step_unit,omitempty"`
	StepPercent int    `json:"step_percent,omitempty"`
	ETA         string `json:"eta,omitempty"`
	StepText    string `json:"step_text"` // "ocr 12/300 pages, ETA 9m20s"
	Error       string `json:"error,omitempty"`
	UpdatedAt   string `json:"updated_at"`
}

// stepNames is the order steps are shown in, read from the default
// pipeline when a page first needs it rather than at start-up.
var stepNames = sync.OnceValue(func() []string { return pipelinefile.Default().StepNames() })

func newProgressView(p pipeline.StepProgress) progressView {
	finished := p.SegmentsDone + p.SegmentsFailed + p.SegmentsSkipped
	pct := 0
	switch {
	case p.Status == pipeline.WorkflowCompleted:
		pct = 100
	case p.TotalSegments > 0:
		pct = min(100, finished*100/p.TotalSegments)
	}
	v := progressView{
		WorkflowID: p.WorkflowID, ProjectID: p.ProjectID, FileName: p.FileName, Status: string(p.Status),
		CurrentStep: p.Doing(), FailedStep: p.FailedStep(), SegmentsTotal: p.TotalSegments, SegmentsDone: p.SegmentsDone,
		SegmentsFailed: p.SegmentsFailed, SegmentsSkipped: p.SegmentsSkipped, Percent: pct,
		Error: p.Error, UpdatedAt: p.UpdatedAt,
	}
	if st, ok := p.Steps[v.CurrentStep]; ok && st.Status == pipeline.StepInProgress && st.Progress != nil && st.Progress.Total > 0 {
		sp := st.Progress
		v.StepDone, v.StepTotal, v.StepUnit = sp.Done, sp.Total, sp.Unit
		v.StepPercent = min(100, sp.Done*100/sp.Total)
		if left, ok := sp.Remaining(st.StartedAt); ok {
			v.ETA = formatETA(left)
		}
	}
	v.StepText = v.CurrentStep
	if v.StepTotal > 0 {
		v.StepText += fmt.Sprintf(" %d/%d %s", v.StepDone, v.StepTotal, v.StepUnit)
	}
	if v.ETA != "" {
		v.StepText += ", ETA " + v.ETA
	}
	return v
}

// formatETA rounds the time left to what a reader needs: seconds under a
// minute, then minutes and seconds ("2m10s"), then hours and minutes.
func formatETA(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(10 * time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// stepView is one row of the step timeline.
type stepView struct {
	Name      string  `json:"name"`
	Label     string  `json:"label,omitempty"`
	Status    string  `json:"status"`
	StartedAt string  `json:"started_at,omitempty"`
	EndedAt   string  `json:"ended_at,omitempty"`
	Seconds   float64 `json:"seconds"`
	Error     string  `json:"error,omitempty"` // why the step failed
	Note      string  `json:"note,omitempty"`  // what a step that did not fail reported
	// ReusedFrom names the analysis whose output a completed step reused
	// (the stage cache) instead of running.
	ReusedFrom string `json:"reused_from,omitempty"`
}

// Took renders the step's duration for the timeline.
func (s stepView) Took() string {
	if s.StartedAt == "" || s.EndedAt == "" {
		return ""
	}
	d := time.Duration(s.Seconds * float64(time.Second))
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func stepViews(p pipeline.StepProgress) []stepView {
	var out []stepView
	seen := map[string]bool{}
	add := func(name string, st pipeline.StepState) {
		v := stepView{Name: name, Label: st.Label, Status: string(st.Status), StartedAt: st.StartedAt, EndedAt: st.EndedAt}
		if st.Reused() {
			v.ReusedFrom = st.ReusedFrom
		}
		// The step item keeps one message field: a failure's reason, or
		// what a finished step reported ("4 segments done, ...").
		if st.Status == pipeline.StepFailed {
			v.Error = st.Error
		} else {
			v.Note = st.Error
		}
		start, err1 := time.Parse(time.RFC3339Nano, st.StartedAt)
		end, err2 := time.Parse(time.RFC3339Nano, st.EndedAt)
		if err1 == nil && err2 == nil && !end.Before(start) {
			v.Seconds = end.Sub(start).Seconds()
		}
		out = append(out, v)
		seen[name] = true
	}
	for _, name := range stepNames() {
		if st, ok := p.Steps[name]; ok {
			add(name, st)
		}
	}
	// Stages of a user's pipeline that the default does not know, in the
	// order they started (not started yet last), so the timeline reads
	// the way the workflow ran.
	var rest []string
	for name := range p.Steps {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.SortFunc(rest, func(a, b string) int {
		sa, sb := p.Steps[a].StartedAt, p.Steps[b].StartedAt
		if (sa == "") != (sb == "") {
			if sa == "" {
				return 1
			}
			return -1
		}
		return cmp.Or(strings.Compare(sa, sb), strings.Compare(a, b))
	})
	for _, name := range rest {
		add(name, p.Steps[name])
	}
	return out
}

// analysisView is GET /api/analyses/{id}.
type analysisView struct {
	Workflow    pipeline.Workflow     `json:"workflow"`
	Progress    progressView          `json:"progress"`
	Steps       []stepView            `json:"steps"`
	Transitions []pipeline.Transition `json:"transitions"`
	// stepItem says where the outputs of stages that reused another
	// workflow's are (outputKey).
	stepItem pipeline.StepProgress
}

// outputKey is the blob holding the output the workflow keeps under own:
// its own, or the one a reused stage points at.
func (v analysisView) outputKey(own func(pipeline.WorkflowRef) string) string {
	ref := refOf(v.Workflow)
	return v.stepItem.OutputBlobKey(ref, own(ref))
}

// loadAnalysis reads a workflow known only by its id: the step item names
// its document, under which the workflow metadata lives.
func (s *Server) loadAnalysis(ctx context.Context, id string, withTransitions bool) (analysisView, error) {
	repo := s.opts.Repo
	prog, err := repo.GetProgress(ctx, id)
	if err != nil {
		return analysisView{}, fmt.Errorf("analysis %s: %w", id, err)
	}
	wf, err := repo.GetWorkflow(ctx, prog.DocumentID, id)
	if err != nil {
		return analysisView{}, fmt.Errorf("analysis %s: %w", id, err)
	}
	v := analysisView{Workflow: wf, Progress: newProgressView(prog), Steps: stepViews(prog), Transitions: []pipeline.Transition{}, stepItem: prog}
	if withTransitions {
		trs, err := repo.ListTransitions(ctx, id)
		if err != nil {
			return analysisView{}, err
		}
		if trs != nil {
			v.Transitions = trs
		}
	}
	return v, nil
}
