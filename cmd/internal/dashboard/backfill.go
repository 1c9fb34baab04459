package dashboard

import (
	"context"
	"errors"
	"net/http"

	"github.com/docpipe/docpipe/pipeline"
)

// Backfiller is a Starter that can also move a project's documents onto
// a pipeline version (docpipe backfill); the pipeline page offers its
// button only where the Starter is one.
type Backfiller interface {
	// Backfill starts a workflow on name@version for every document of
	// project whose latest workflow on name is on another version, and
	// returns how many it started.
	Backfill(ctx context.Context, project, name string, version int) (int, error)
}

// versionDocuments is how a project's documents stand towards one
// version of a pipeline, with the backfill's forecast per document.
type versionDocuments struct {
	Project   string            `json:"project"`
	Version   int               `json:"version"`
	OnVersion int               `json:"on_version"`
	Older     int               `json:"on_older_versions"`
	Newer     int               `json:"on_newer_versions"`
	Forecast  []backfillPreview `json:"forecast"`
	CanStart  bool              `json:"can_start"`
}

// backfillPreview is one document of a backfill's dry run.
type backfillPreview struct {
	FileName string   `json:"file_name"`
	From     string   `json:"from"` // the workflow it supersedes
	Version  int      `json:"from_version"`
	Run      []string `json:"run"`
	Reuse    []string `json:"reuse"`
}

// versionDocuments counts the project's documents by the version of their
// latest workflow on the pipeline (pipeline.LatestWorkflows) and forecasts
// a backfill onto version.
func (s *Server) versionDocuments(ctx context.Context, project, name string, version int) (versionDocuments, error) {
	v := versionDocuments{Project: project, Version: version, Forecast: []backfillPreview{}}
	_, v.CanStart = s.opts.Starter.(Backfiller)
	latest, err := s.opts.Repo.LatestWorkflows(ctx, project, name)
	if err != nil {
		return v, err
	}
	for _, wf := range latest {
		switch {
		case wf.PipelineVersion == version:
			v.OnVersion++
		case wf.PipelineVersion < version:
			v.Older++
		default:
			v.Newer++
		}
	}
	def, err := s.opts.Repo.Definition(ctx, name, version)
	if err != nil {
		return v, err
	}
	items, err := s.opts.Repo.PlanBackfill(ctx, project, name, version, pipeline.BackfillFilter{})
	if err != nil {
		return v, err
	}
	for _, it := range items {
		prev := it.Previous
		prevDef, err := s.opts.Repo.Definition(ctx, prev.Pipeline, prev.PipelineVersion)
		if err != nil {
			return v, err
		}
		p, err := s.opts.Repo.GetProgress(ctx, prev.ID)
		if err != nil {
			return v, err
		}
		row := backfillPreview{FileName: prev.FileName, From: prev.ID, Version: prev.PipelineVersion, Run: []string{}, Reuse: []string{}}
		for _, fc := range pipeline.ForecastStages(prevDef, def, p, false) {
			if fc.Reused {
				row.Reuse = append(row.Reuse, fc.Stage)
			} else {
				row.Run = append(row.Run, fc.Stage)
			}
		}
		v.Forecast = append(v.Forecast, row)
	}
	return v, nil
}

// GET /api/pipelines/{name}/versions/{version}/backfill?project=P: how the
// project's documents stand towards the version, and what a backfill onto
// it would run and reuse, per document (a dry run).
func (s *Server) apiBackfillPreview(w http.ResponseWriter, r *http.Request) {
	name, project, version, ok := s.backfillParams(w, r)
	if !ok {
		return
	}
	v, err := s.versionDocuments(r.Context(), project, name, version)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// POST /api/pipelines/{name}/versions/{version}/backfill?project=P: start
// the backfill.
func (s *Server) apiBackfill(w http.ResponseWriter, r *http.Request) {
	name, project, version, ok := s.backfillParams(w, r)
	if !ok {
		return
	}
	b, can := s.opts.Starter.(Backfiller)
	if !can {
		writeError(w, http.StatusNotImplemented, "this server cannot start a backfill; run docpipe backfill")
		return
	}
	n, err := b.Backfill(r.Context(), project, name, version)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	s.live.poke()
	writeJSON(w, http.StatusAccepted, map[string]any{"project": project, "pipeline": pipeline.PipelineKey(name, version), "started": n})
}

// backfillParams reads a backfill request's pipeline, version and project
// (the server's own by default), answering the request when they are bad.
func (s *Server) backfillParams(w http.ResponseWriter, r *http.Request) (name, project string, version int, ok bool) {
	version, err := versionParam(r.PathValue("version"))
	if err == nil && version == 0 {
		version, err = s.opts.Repo.CurrentPipelineVersion(r.Context(), r.PathValue("name"))
	}
	if errors.Is(err, pipeline.ErrNotFound) {
		s.writeFailure(w, r, err)
		return "", "", 0, false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return "", "", 0, false
	}
	project = r.URL.Query().Get("project")
	if project == "" {
		project = s.opts.Project
	}
	return r.PathValue("name"), project, version, true
}
