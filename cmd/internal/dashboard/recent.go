package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// Recent analyses of every status, newest first (what `docpipe status
// --all` prints), and the projects they belong to. Both read through the
// repository's queries: one per project for the list, one count per
// project for the projects page, never a scan.

// recentStatuses are the statuses the recent list filters by.
var recentStatuses = []string{
	string(pipeline.WorkflowPending), string(pipeline.WorkflowInProgress), string(pipeline.WorkflowWaitingReview),
	string(pipeline.WorkflowCompleted), string(pipeline.WorkflowFailed),
}

// errBadStatus is a status filter that names no status.
var errBadStatus = errors.New("status must be one of pending, in_progress, waiting_review, completed or failed")

// recentFilter reads the list's filters from the query string.
func recentFilter(r *http.Request) (pipeline.RecentFilter, error) {
	q := r.URL.Query()
	f := pipeline.RecentFilter{Project: q.Get("project"), Pipeline: q.Get("pipeline"), Status: pipeline.WorkflowStatus(q.Get("status"))}
	if f.Status != "" && !slices.Contains(recentStatuses, string(f.Status)) {
		return f, errBadStatus
	}
	return f, nil
}

// recentView is one page of the recent list, with what its filters offer.
type recentView struct {
	Analyses  []progressView `json:"analyses"`
	Next      string         `json:"next_cursor"`
	Filter    recentFilterView
	Statuses  []string
	Projects  []string
	Pipelines []string
	First     bool
}

type recentFilterView struct{ Status, Project, Pipeline string }

// Query is the filter as a query string prefix for the pager's links.
func (f recentFilterView) Query() string {
	v := url.Values{}
	for k, s := range map[string]string{"status": f.Status, "project": f.Project, "pipeline": f.Pipeline} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v.Encode()
}

// recent reads one page of recent analyses for r's filters and cursor.
func (s *Server) recent(ctx context.Context, r *http.Request, limit int) (recentView, error) {
	f, err := recentFilter(r)
	if err != nil {
		return recentView{}, err
	}
	cursor := r.URL.Query().Get("cursor")
	list, next, err := s.opts.Repo.ListRecent(ctx, f, limit, cursor)
	if err != nil {
		return recentView{}, err
	}
	v := recentView{
		Analyses: make([]progressView, len(list)), Next: next, First: cursor == "",
		Filter:   recentFilterView{Status: string(f.Status), Project: f.Project, Pipeline: f.Pipeline},
		Statuses: recentStatuses,
	}
	for i, p := range list {
		v.Analyses[i] = newProgressView(p)
	}
	return v, nil
}

// withChoices adds the projects and pipelines the filters offer.
func (s *Server) withChoices(ctx context.Context, v recentView) (recentView, error) {
	projects, err := s.opts.Repo.ListProjects(ctx)
	if err != nil {
		return v, err
	}
	for _, p := range projects {
		v.Projects = append(v.Projects, p.ID)
	}
	pipelines, err := s.opts.Repo.ListPipelines(ctx)
	if err != nil {
		return v, err
	}
	for _, p := range pipelines {
		v.Pipelines = append(v.Pipelines, p.Name)
	}
	return v, nil
}

// projectRow is one line of the projects page.
type projectRow struct {
	ID        string `json:"id"`
	Name      string `json:"name,omitempty"`
	Documents int    `json:"documents"`
	Running   int    `json:"running"`
	Failed    int    `json:"failed"`
	Pipeline  string `json:"pipeline"`
	Capped    bool   `json:"capped,omitempty"` // a count stopped at countUpTo
}

// projectRows lists every project with its document count (one bounded
// count each) and its running and failed analyses (from the status
// index, read once for all projects).
func (s *Server) projectRows(ctx context.Context) ([]projectRow, error) {
	projects, err := s.opts.Repo.ListProjects(ctx)
	if err != nil {
		return nil, err
	}
	running, failed := map[string]int{}, map[string]int{}
	for st, into := range map[pipeline.WorkflowStatus]map[string]int{pipeline.WorkflowInProgress: running, pipeline.WorkflowFailed: failed} {
		list, err := s.opts.Repo.ListByStatus(ctx, st, countUpTo)
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			into[p.ProjectID]++
		}
	}
	rows := make([]projectRow, 0, len(projects))
	for _, p := range projects {
		n, err := s.opts.Repo.CountProjectDocuments(ctx, p.ID, countUpTo)
		if err != nil {
			return nil, err
		}
		rows = append(rows, projectRow{
			ID: p.ID, Name: p.Name, Documents: n, Running: running[p.ID], Failed: failed[p.ID],
			Pipeline: projectPipeline(p), Capped: n >= countUpTo,
		})
	}
	return rows, nil
}

// projectPipeline names the pipeline a project's uploads run.
func projectPipeline(p pipeline.Project) string {
	if p.Settings.Pipeline != "" {
		return p.Settings.Pipeline
	}
	return pipelinefile.Default().Name + " (built-in)"
}
