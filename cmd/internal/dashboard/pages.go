package dashboard

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
)

//go:embed assets/templates/*.html
var templateFS embed.FS

//go:embed assets/static
var staticFS embed.FS

// assetHandler serves the embedded scripts and styles under /assets/.
func assetHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "assets/static")
	files := http.StripPrefix("/assets/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// pageSet holds one template per page, each with the shared layout.
type pageSet struct{ pages map[string]*template.Template }

var pageFuncs = template.FuncMap{
	"localTime": func(s string) string {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return s
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"bytes":    formatBytes,
	"segments": pipeline.SegmentCount,
}

func loadPages() (*pageSet, error) {
	names := []string{"overview", "failed", "projects", "pipelines", "pipeline", "analysis", "upload", "reviews", "review", "search"}
	ps := &pageSet{pages: map[string]*template.Template{}}
	for _, n := range names {
		t, err := template.New(n).Funcs(pageFuncs).ParseFS(templateFS, "assets/templates/layout.html", "assets/templates/"+n+".html")
		if err != nil {
			return nil, err
		}
		ps.pages[n] = t
	}
	return ps, nil
}

// render executes a page into a buffer first, so a template error becomes
// a clean 500 instead of half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, page string, data any) {
	var buf bytes.Buffer
	if err := s.pages.pages[page].ExecuteTemplate(&buf, "layout", map[string]any{"Page": page, "Data": data}); err != nil {
		s.writeFailure(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = buf.WriteTo(w)
}

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request) {
	snap, err := s.snapshot(r.Context())
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	recent, err := s.recent(r.Context(), r, defaultPage)
	if errors.Is(err, errBadStatus) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err == nil {
		recent, err = s.withChoices(r.Context(), recent)
	}
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	s.render(w, r, "overview", map[string]any{"Snap": snap, "Recent": recent})
}

func (s *Server) failedPage(w http.ResponseWriter, r *http.Request) {
	list, next, err := statusPage(r.Context(), s.opts.Repo.Table(), pipeline.WorkflowFailed, r.URL.Query().Get("cursor"), defaultPage)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	views := make([]progressView, len(list))
	for i, p := range list {
		views[i] = newProgressView(p)
	}
	s.render(w, r, "failed", map[string]any{"Failed": views, "Next": next, "First": r.URL.Query().Get("cursor") == ""})
}

func (s *Server) projectsPage(w http.ResponseWriter, r *http.Request) {
	project := r.URL.Query().Get("project")
	if project == "" {
		rows, err := s.projectRows(r.Context())
		if err != nil {
			s.writeFailure(w, r, err)
			return
		}
		s.render(w, r, "projects", map[string]any{"Projects": rows, "CountUpTo": countUpTo})
		return
	}
	list, next, err := projectPage(r.Context(), s.opts.Repo.Table(), project, r.URL.Query().Get("cursor"), defaultPage)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	_, perr := s.opts.Repo.GetProject(r.Context(), project)
	if perr != nil && !errors.Is(perr, pipeline.ErrNotFound) {
		s.writeFailure(w, r, perr)
		return
	}
	s.render(w, r, "projects", map[string]any{
		"Project": project, "Known": perr == nil, "Default": s.opts.Project,
		"Analyses": list, "Next": next, "First": r.URL.Query().Get("cursor") == "",
	})
}

func (s *Server) analysisPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.loadAnalysis(r.Context(), r.PathValue("id"), true)
	if errors.Is(err, pipeline.ErrNotFound) {
		// A document's id stands for its latest workflow.
		latest, found, lerr := s.opts.Repo.LatestDocumentWorkflow(r.Context(), r.PathValue("id"))
		if lerr != nil {
			s.writeFailure(w, r, lerr)
			return
		}
		if found {
			http.Redirect(w, r, "/analyses/"+url.PathEscape(latest.ID), http.StatusSeeOther)
			return
		}
	}
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	_, gerr := s.opts.Blobs.Head(r.Context(), v.outputKey(pipeline.GraphBlobKey))
	if gerr != nil && !errors.Is(gerr, blob.ErrNotFound) {
		s.writeFailure(w, r, gerr)
		return
	}
	summary, graph := s.documentResults(r.Context(), v.Workflow)
	s.render(w, r, "analysis", map[string]any{"A": v, "HasGraph": gerr == nil, "WritesSummary": summary, "WritesGraph": graph})
}

// documentResults says whether the analysis's pipeline writes a summary
// and a graph, so that the page asks only for results that will come (a
// request for one that never does fails in the browser's console). When
// the pipeline cannot be read, the page asks for both.
func (s *Server) documentResults(ctx context.Context, wf pipeline.Workflow) (summary, graph bool) {
	def, err := s.opts.Repo.Definition(ctx, wf.Pipeline, wf.PipelineVersion)
	if err != nil {
		return true, true
	}
	for _, st := range def.Stages {
		switch st.Run.Builtin {
		case pipeline.StepDocumentSummarizer:
			summary = true
		case pipeline.StepGraphBuilder:
			graph = true
		}
	}
	return summary, graph
}

func (s *Server) uploadPage(w http.ResponseWriter, r *http.Request) {
	projects, err := s.opts.Repo.ListProjects(r.Context())
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	project := r.URL.Query().Get("project")
	if project == "" {
		project = s.opts.Project
	}
	// A project not stored yet is created by its first upload and runs
	// the built-in pipeline.
	choices := []projectRow{{ID: project, Pipeline: projectPipeline(pipeline.Project{})}}
	for _, p := range projects {
		row := projectRow{ID: p.ID, Name: p.Name, Pipeline: projectPipeline(p)}
		if p.ID == project {
			choices[0] = row
			continue
		}
		choices = append(choices, row)
	}
	s.render(w, r, "upload", map[string]any{
		"Limit": s.opts.MaxUploadBytes, "LimitBytes": strconv.FormatInt(s.opts.MaxUploadBytes, 10),
		"Project": choices[0], "Projects": choices, "MaxFiles": maxFilesPerUpload,
		"NewPipeline": projectPipeline(pipeline.Project{}),
	})
}
