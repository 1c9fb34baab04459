package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

// The pipelines page: stored pipelines with their current version, and for
// one pipeline its versions, the stages of one version and the analyses
// that ran it, newest first, and its last evaluation runs. Every read is a
// Query on one partition: the registry, the pipeline's own partition, or
// its GSI2 partition of workflows and of evaluation runs by version.

// stageRow is one stage of a version as the page and the API show it.
type stageRow struct {
	Name    string `json:"name"`
	Label   string `json:"label,omitempty"`
	Scope   string `json:"scope"`
	Needs   string `json:"needs"`
	Run     string `json:"run"`
	When    string `json:"when"`
	Timeout string `json:"timeout"`
	Retry   string `json:"retry"`
}

func stageRows(def pipeline.Definition) []stageRow {
	rows := make([]stageRow, len(def.Stages))
	for i, st := range def.Stages {
		needs := strings.Join(st.Needs, ", ")
		if needs == "" {
			needs = "-"
		}
		rows[i] = stageRow{
			Name: st.Name, Label: st.Label, Scope: string(st.Scope), Needs: needs,
			Run: st.Run.String(), When: st.When.String(),
			Timeout: (time.Duration(st.TimeoutSeconds) * time.Second).String(), Retry: st.RetryText(),
		}
	}
	return rows
}

// versionView is GET /api/pipelines/{name}/versions/{version}.
type versionView struct {
	pipeline.PipelineVersion
	BatchSize      int                 `json:"batch_size"`
	MaxConcurrency int                 `json:"max_concurrency"`
	StageRows      []stageRow          `json:"stage_rows"`
	Definition     pipeline.Definition `json:"definition"`
}

func newVersionView(v pipeline.PipelineVersion) versionView {
	return versionView{
		PipelineVersion: v, BatchSize: v.Definition.BatchSize, MaxConcurrency: v.Definition.MaxConcurrency,
		StageRows: stageRows(v.Definition), Definition: v.Definition.Redacted(),
	}
}

// versionParam reads a version number from the path or the query; "" and
// "current" are 0, the current version.
func versionParam(s string) (int, error) {
	if s == "" || s == "current" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("version must be a number from 1 or \"current\", not %q", s)
	}
	return n, nil
}

func (s *Server) pipelinesPage(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Repo.ListPipelines(r.Context())
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	s.render(w, r, "pipelines", map[string]any{"Pipelines": list})
}

func (s *Server) pipelinePage(w http.ResponseWriter, r *http.Request) {
	ctx, name, q := r.Context(), r.PathValue("name"), r.URL.Query()
	version, err := versionParam(q.Get("version"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	history, err := s.opts.Repo.PipelineHistory(ctx, name)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	v, err := s.opts.Repo.GetPipeline(ctx, name, version)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	analyses, next, err := pipelinePage(ctx, s.opts.Repo.Table(), name, q.Get("cursor"), defaultPage)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	evals, err := s.evalSection(ctx, name, version)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	docs, err := s.versionDocuments(ctx, s.opts.Project, name, v.Version)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	s.render(w, r, "pipeline", map[string]any{
		"Name": name, "History": history, "V": newVersionView(v), "Current": history[0].Version,
		"Analyses": analyses, "Next": next, "First": q.Get("cursor") == "", "Evals": evals, "Docs": docs,
	})
}

// GET /api/pipelines: every stored pipeline with its current version.
func (s *Server) apiPipelines(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Repo.ListPipelines(r.Context())
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	if list == nil {
		list = []pipeline.PipelineSummary{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"pipelines": list})
}

// GET /api/pipelines/{name}: the pipeline's versions, newest first.
func (s *Server) apiPipeline(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	history, err := s.opts.Repo.PipelineHistory(r.Context(), name)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "current": history[0].Version, "versions": history})
}

// GET /api/pipelines/{name}/versions/{version}: one version with its
// stages ("current" for the current one).
func (s *Server) apiPipelineVersion(w http.ResponseWriter, r *http.Request) {
	version, err := versionParam(r.PathValue("version"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	v, err := s.opts.Repo.GetPipeline(r.Context(), r.PathValue("name"), version)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newVersionView(v))
}

// GET /api/pipelines/{name}/analyses?cursor=&limit=: the analyses that ran
// the pipeline (any version), newest first.
func (s *Server) apiPipelineAnalyses(w http.ResponseWriter, r *http.Request) {
	limit, err := pageLimit(r, defaultPage, maxPage)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	list, next, err := pipelinePage(r.Context(), s.opts.Repo.Table(), r.PathValue("name"), r.URL.Query().Get("cursor"), limit)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"analyses": list, "next_cursor": next})
}

// evalRunsShown is how many evaluation runs the pipeline page lists.
const evalRunsShown = 20

// evalFieldsShown is how many field scores a run's row shows before the
// rest, lowest first: the fields a version most needs work on.
const evalFieldsShown = 3

// evalSection is the pipeline page's Evaluation section: the last runs of
// every version, newest first, or of one version when the page was asked
// for that version by number.
type evalSection struct {
	Version int // 0: every version
	Rows    []evalRow
	More    bool // older runs than the rows
}

// evalRow is one evaluation run as the pipeline page shows it.
type evalRow struct {
	pipeline.EvalRun
	Lowest []pipeline.EvalFieldScore // the lowest-scoring fields
	Others []pipeline.EvalFieldScore // the rest, lowest first
	Cost   string
}

func (s *Server) evalSection(ctx context.Context, name string, version int) (evalSection, error) {
	var (
		runs []pipeline.EvalRun
		next string
		err  error
	)
	if version > 0 {
		runs, next, err = s.opts.Repo.ListVersionEvalRuns(ctx, name, version, evalRunsShown, "")
	} else {
		runs, next, err = s.opts.Repo.ListEvalRuns(ctx, name, evalRunsShown, "")
	}
	if err != nil {
		return evalSection{}, err
	}
	sec := evalSection{Version: version, More: next != ""}
	for _, run := range runs {
		fields := slices.Clone(run.Fields)
		slices.SortStableFunc(fields, func(a, b pipeline.EvalFieldScore) int { return cmp.Compare(a.Score, b.Score) })
		n := min(len(fields), evalFieldsShown)
		sec.Rows = append(sec.Rows, evalRow{EvalRun: run, Lowest: fields[:n], Others: fields[n:], Cost: evalCostText(run.Cost)})
	}
	return sec, nil
}

// PagesScore is the share of page snippets found, "" when the truth set
// looks for none.
func (r evalRow) PagesScore() string {
	if r.Pages == nil {
		return ""
	}
	return fmt.Sprintf("%.3f", *r.Pages)
}

// evalCostText is a run's cost in one line, as docpipe eval prints it.
func evalCostText(c pipeline.EvalCost) string {
	s := fmt.Sprintf("%d transitions, %d/%d AI tokens, $%.4f", c.Transitions, c.InputTokens, c.OutputTokens, c.PriceUSD)
	if len(c.Unpriced) > 0 {
		s += " (no price: " + strings.Join(c.Unpriced, ", ") + ")"
	}
	return s
}
