package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// Paging bounds of the list routes.
const (
	defaultPage     = 50
	maxPage         = 500
	defaultSegments = 500
	maxSegments     = 2000
	// maxFilesPerUpload bounds one multipart request.
	maxFilesPerUpload = 16
	// maxTextBytes bounds the segment text one request returns.
	maxTextBytes = 1 << 20
	// maxBatchBytes bounds the batch analysis blob read for one segment.
	maxBatchBytes = 64 << 20
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// writeFailure maps an error from the repository or starter onto a status.
func (s *Server) writeFailure(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errBadCursor):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, pipeline.ErrNotFound):
		writeError(w, http.StatusNotFound, notFoundMessage(err))
	case errors.Is(err, ErrBusy):
		writeError(w, http.StatusConflict, err.Error())
	case r.Context().Err() != nil:
		// the client went away; nobody reads the answer
	default:
		s.opts.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// notFoundMessage names what was asked for ("analysis ID not found", the
// context a handler wraps the error in) and leaves out the rest, which
// holds the table's internal keys.
func notFoundMessage(err error) string {
	what, _, _ := strings.Cut(err.Error(), ": ")
	if strings.ContainsAny(what, "#|") || what == err.Error() {
		return "not found"
	}
	return what + " not found"
}

// pageLimit reads ?limit=, 1..max, def when absent.
func pageLimit(r *http.Request, def, max int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, fmt.Errorf("limit must be a number from 1 to %d", max)
	}
	return n, nil
}

// listStatuses are the statuses the index holds (completed ones leave it).
var listStatuses = map[string]pipeline.WorkflowStatus{
	"pending":     pipeline.WorkflowPending,
	"in_progress": pipeline.WorkflowInProgress,
	"failed":      pipeline.WorkflowFailed,
	// Parked on a review: waiting for a person, not for docpipe.
	"waiting_review": pipeline.WorkflowWaitingReview,
}

// GET /api/analyses?status=in_progress|pending|waiting_review|failed&cursor=&limit=
func (s *Server) apiList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("all") != "" {
		s.apiRecent(w, r)
		return
	}
	name := q.Get("status")
	if name == "" {
		name = "in_progress"
	}
	status, ok := listStatuses[name]
	if !ok {
		writeError(w, http.StatusBadRequest, "status must be pending, in_progress, waiting_review or failed (completed analyses are not in the status index)")
		return
	}
	limit, err := pageLimit(r, defaultPage, maxPage)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	list, next, err := statusPage(r.Context(), s.opts.Repo.Table(), status, q.Get("cursor"), limit)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	views := make([]progressView, len(list))
	for i, p := range list {
		views[i] = newProgressView(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"analyses": views, "next_cursor": next})
}

// GET /api/analyses?all=1: analyses of every status, newest first, paged
// by cursor, filtered by status, project and pipeline.
func (s *Server) apiRecent(w http.ResponseWriter, r *http.Request) {
	limit, err := pageLimit(r, defaultPage, maxPage)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	v, err := s.recent(r.Context(), r, limit)
	if errors.Is(err, errBadStatus) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"analyses": v.Analyses, "next_cursor": v.Next})
}

// GET /api/projects: every project with its counts and pipeline.
func (s *Server) apiProjects(w http.ResponseWriter, r *http.Request) {
	rows, err := s.projectRows(r.Context())
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"projects": rows})
}

// GET /api/analyses/{id}
func (s *Server) apiAnalysis(w http.ResponseWriter, r *http.Request) {
	v, err := s.loadAnalysis(r.Context(), r.PathValue("id"), r.URL.Query().Get("transitions") != "0")
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// segmentCell is one cell of the segment grid.
type segmentCell struct {
	Index  int    `json:"index"`
	Status string `json:"status"`
	Kind   string `json:"kind,omitempty"`
	Chars  int    `json:"chars"`
	Error  string `json:"error,omitempty"`
}

// GET /api/analyses/{id}/segments?cursor=&limit= — the cursor is the index
// of the first segment of the page, so a page is one range query.
func (s *Server) apiSegments(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	limit, err := pageLimit(r, defaultSegments, maxSegments)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	from := 1
	if c := r.URL.Query().Get("cursor"); c != "" {
		if from, err = strconv.Atoi(c); err != nil || from < 1 {
			writeError(w, http.StatusBadRequest, "bad cursor: want a segment index from an earlier page's next_cursor")
			return
		}
	}
	prog, err := s.opts.Repo.GetProgress(r.Context(), id)
	if err != nil {
		s.writeFailure(w, r, fmt.Errorf("analysis %s: %w", id, err))
		return
	}
	to := from + limit - 1
	segs, err := s.opts.Repo.SegmentsInRange(r.Context(), id, from, to)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	cells := make([]segmentCell, len(segs))
	for i, sg := range segs {
		cells[i] = segmentCell{Index: sg.Index, Status: string(sg.Status), Kind: sg.Kind, Chars: sg.Chars, Error: sg.Error}
	}
	next := ""
	if to < prog.TotalSegments {
		next = strconv.Itoa(to + 1)
	}
	writeJSON(w, http.StatusOK, map[string]any{"segments": cells, "total": prog.TotalSegments, "next_cursor": next})
}

// segmentDetail is GET /api/analyses/{id}/segments/{index}.
type segmentDetail struct {
	Segment   pipeline.Segment `json:"segment"`
	Text      string           `json:"text"`
	Truncated bool             `json:"truncated,omitempty"`
	Analysis  json.RawMessage  `json:"analysis,omitempty"`
}

func (s *Server) apiSegment(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	index, err := strconv.Atoi(r.PathValue("index"))
	if err != nil || index < 1 {
		writeError(w, http.StatusBadRequest, "segment index must be a number from 1")
		return
	}
	d, err := s.loadSegment(r, id, index)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) loadSegment(r *http.Request, id string, index int) (segmentDetail, error) {
	ctx := r.Context()
	if _, err := s.opts.Repo.GetProgress(ctx, id); err != nil {
		return segmentDetail{}, fmt.Errorf("analysis %s: %w", id, err)
	}
	seg, err := s.opts.Repo.GetSegment(ctx, id, index)
	if err != nil {
		return segmentDetail{}, fmt.Errorf("segment %d of %s: %w", index, id, err)
	}
	d := segmentDetail{Segment: seg}
	if seg.TextKey != "" {
		text, err := blob.GetBytes(ctx, s.opts.Blobs, seg.TextKey, maxTextBytes)
		var tooLarge *blob.TooLargeError
		switch {
		case errors.As(err, &tooLarge):
			text, err = readPrefix(r, s.opts.Blobs, seg.TextKey, maxTextBytes)
			d.Truncated = true
		case errors.Is(err, blob.ErrNotFound):
			err = nil
		}
		if err != nil {
			return segmentDetail{}, err
		}
		d.Text = strings.ToValidUTF8(string(text), "\uFFFD")
	}
	if seg.ResultKey != "" {
		raw, err := blob.GetBytes(ctx, s.opts.Blobs, seg.ResultKey, maxBatchBytes)
		if err != nil && !errors.Is(err, blob.ErrNotFound) {
			return segmentDetail{}, err
		}
		var entries []stageoutput.BatchEntry
		if err == nil && json.Unmarshal(raw, &entries) == nil {
			for _, e := range entries {
				if e.Index == index && e.Result != nil {
					d.Analysis, _ = json.Marshal(e.Result)
				}
			}
		}
	}
	return d, nil
}

func readPrefix(r *http.Request, store blob.Store, key string, n int64) ([]byte, error) {
	rc, err := store.Get(r.Context(), key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, n))
	for len(b) > 0 && !utf8.Valid(b) { // cut at a rune boundary
		b = b[:len(b)-1]
	}
	return b, err
}

// uploadResult is one file of POST /api/uploads.
type uploadResult struct {
	File       string `json:"file"`
	Project    string `json:"project"`
	Pipeline   string `json:"pipeline,omitempty"`
	WorkflowID string `json:"workflow_id"`
	Status     string `json:"status"`
	Existing   bool   `json:"existing"`
	URL        string `json:"url"`
}

// errTooLarge is a file over the upload limit.
var errTooLarge = errors.New("file too large")

// limitedReader fails once more than n bytes were read, so an oversized
// upload stops being stored as soon as it crosses the limit.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, errTooLarge
	}
	return n, err
}

// POST /api/uploads (multipart/form-data, one or more parts named "file").
func (s *Server) apiUpload(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		writeError(w, http.StatusUnsupportedMediaType, "uploads are multipart/form-data with one or more parts named \"file\"")
		return
	}
	limit := s.opts.MaxUploadBytes
	if r.ContentLength > maxFilesPerUpload*limit+(1<<20) {
		writeError(w, http.StatusRequestEntityTooLarge, tooLargeMessage(limit))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFilesPerUpload*limit+(1<<20))
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad multipart body: "+err.Error())
		return
	}
	project := r.URL.Query().Get("project")
	if project == "" {
		project = s.opts.Project
	}
	if err := pipeline.ValidProjectID(project); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	results := []uploadResult{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.uploadFailed(w, r, err)
			return
		}
		if part.FormName() != "file" || part.FileName() == "" {
			continue
		}
		if len(results) == maxFilesPerUpload {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("at most %d files per request", maxFilesPerUpload))
			return
		}
		name := cleanFileName(part.FileName())
		reg, err := s.opts.Starter.Upload(r.Context(), project, name, &limitedReader{r: part, n: limit})
		if err != nil {
			s.uploadFailed(w, r, err)
			return
		}
		wf := reg.Workflow
		results = append(results, uploadResult{File: name, Project: project, Pipeline: wf.Pipeline, WorkflowID: wf.ID, Status: string(wf.Status), Existing: reg.Existing, URL: "/analyses/" + wf.ID})
	}
	if len(results) == 0 {
		writeError(w, http.StatusBadRequest, "no file in the upload: send parts named \"file\"")
		return
	}
	s.live.poke()
	writeJSON(w, http.StatusCreated, map[string]any{"uploads": results})
}

func (s *Server) uploadFailed(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.Is(err, errTooLarge) || errors.As(err, &mbe) {
		writeError(w, http.StatusRequestEntityTooLarge, tooLargeMessage(s.opts.MaxUploadBytes))
		return
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "the upload came in too slowly")
		return
	}
	s.writeFailure(w, r, err)
}

func tooLargeMessage(limit int64) string {
	return fmt.Sprintf("a file may be at most %s", formatBytes(limit))
}

// cleanFileName keeps the last path element of a client's file name, as
// metadata only.
func cleanFileName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.ToValidUTF8(strings.TrimSpace(name), "")
	if name == "" || name == "." || name == "/" {
		name = "upload"
	}
	if len(name) > 255 {
		name = name[:255]
	}
	return name
}

// POST /api/analyses/{id}/rerun
func (s *Server) apiRerun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	prog, err := s.opts.Repo.GetProgress(r.Context(), id)
	if err != nil {
		s.writeFailure(w, r, fmt.Errorf("analysis %s: %w", id, err))
		return
	}
	if prog.Status == pipeline.WorkflowPending || prog.Status == pipeline.WorkflowInProgress {
		writeError(w, http.StatusConflict, fmt.Sprintf("analysis %s is still %s", id, prog.Status))
		return
	}
	reset, err := s.opts.Starter.Rerun(r.Context(), id)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	s.live.poke()
	if len(reset) == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"workflow_id": id, "reset": []string{}, "message": "nothing to re-run (completed, no failed segments)"})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"workflow_id": id, "reset": reset, "url": "/analyses/" + id})
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// GET /api/analyses/{id}/summary: the document summary, once
// document_summarizer has written it.
func (s *Server) apiSummary(w http.ResponseWriter, r *http.Request) {
	v, err := s.loadAnalysis(r.Context(), r.PathValue("id"), false)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	raw, err := blob.GetBytes(r.Context(), s.opts.Blobs, v.outputKey(pipeline.SummaryBlobKey), maxBatchBytes)
	if errors.Is(err, blob.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no summary yet: document_summarizer has not run")
		return
	}
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(raw)
}
