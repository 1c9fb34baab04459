package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/review"
)

// reviewerCookie keeps the name a person typed on the reviews page; the
// page's script sets it, and actions without a "by" fall back to it.
const reviewerCookie = "docpipe_reviewer"

// maxDecisionBytes bounds a decision's JSON body (a comment and edits).
const maxDecisionBytes = 1 << 20

// reviewView is a review as the pages and the API show it. The task
// token stays on the server: it answers a Step Functions task.
type reviewView struct {
	pipeline.Review
	Overdue bool `json:"overdue"`
}

func newReviewView(v pipeline.Review, now time.Time) reviewView {
	v.TaskToken = ""
	return reviewView{Review: v, Overdue: v.Overdue(now)}
}

// Reviewers names who may decide: the owner of a claimed review, else
// the assignees or the group. The page offers every action to everyone;
// the repository decides who may take it.
func (v reviewView) Reviewers() string {
	switch {
	case v.Owner != "":
		return v.Owner
	case len(v.Assign) > 0:
		return strings.Join(v.Assign, ", ")
	case v.Group != "":
		return "group " + v.Group
	}
	return "anyone"
}

// reviewFilter is what a listing asks for: ?overdue=1, ?mine=NAME,
// ?project=P. A signed-in user's "mine" is themselves, with their groups.
type reviewFilter struct {
	overdue bool
	mine    string
	groups  []string
	project string
}

func parseReviewFilter(r *http.Request) reviewFilter {
	q := r.URL.Query()
	f := reviewFilter{overdue: q.Get("overdue") == "1" || q.Get("overdue") == "true", mine: q.Get("mine"), project: q.Get("project")}
	if id := identityFrom(r.Context()); id.verified && f.mine != "" {
		f.mine, f.groups = id.user.Name, id.user.Groups
	}
	return f
}

// listReviews reads the undecided reviews, soonest due first (or the
// overdue ones: one range query on the due dates), and keeps those the
// filter asks for.
func (s *Server) listReviews(r *http.Request, f reviewFilter, now time.Time) ([]reviewView, error) {
	var list []pipeline.Review
	var err error
	if f.overdue {
		list, err = s.opts.Repo.ListOverdueReviews(r.Context(), now)
	} else {
		list, err = s.opts.Repo.ListOpenReviews(r.Context())
	}
	if err != nil {
		return nil, err
	}
	list = slices.DeleteFunc(list, func(v pipeline.Review) bool {
		return f.project != "" && v.ProjectID != f.project || f.mine != "" && !v.MayDecide(f.mine, f.groups)
	})
	views := make([]reviewView, len(list))
	for i, v := range list {
		views[i] = newReviewView(v, now)
	}
	return views, nil
}

// GET /api/reviews?overdue=1&mine=NAME&project=P
func (s *Server) apiReviews(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	list, err := s.listReviews(r, parseReviewFilter(r), now)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reviews": list, "at": pipeline.FormatTime(now)})
}

// GET /reviews: the queue, with the overdue ones first.
func (s *Server) reviewsPage(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	f := parseReviewFilter(r)
	open, err := s.listReviews(r, f, now)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	var overdue []reviewView
	for _, v := range open {
		if v.Overdue {
			overdue = append(overdue, v)
		}
	}
	reviewer, signedIn := reviewerOf(r)
	s.render(w, r, "reviews", map[string]any{
		"Reviews": open, "Overdue": overdue, "OnlyOverdue": f.overdue, "Reviewer": reviewer, "SignedIn": signedIn,
	})
}

// reviewerOf is who the pages act as: the signed-in user, else the name
// the reviewer cookie keeps.
func reviewerOf(r *http.Request) (name string, signedIn bool) {
	if id := identityFrom(r.Context()); id.verified {
		return id.user.Name, true
	}
	if c, err := r.Cookie(reviewerCookie); err == nil {
		name, _ = url.QueryUnescape(c.Value)
	}
	return name, false
}

// reviewDetail is one review with what it is about.
type reviewDetail struct {
	reviewView
	Content reviewContent `json:"content"`
}

func (s *Server) loadReviewDetail(r *http.Request) (reviewDetail, error) {
	wf, stage, err := pipeline.ParseReviewID(r.PathValue("id"))
	if err != nil {
		return reviewDetail{}, fmt.Errorf("review %s: %w", r.PathValue("id"), pipeline.ErrNotFound)
	}
	v, err := s.opts.Repo.GetReview(r.Context(), wf, stage)
	if err != nil {
		return reviewDetail{}, fmt.Errorf("review %s: %w", r.PathValue("id"), err)
	}
	c, err := s.loadReviewContent(r.Context(), v)
	if err != nil {
		return reviewDetail{}, err
	}
	return reviewDetail{reviewView: newReviewView(v, time.Now()), Content: c}, nil
}

// GET /reviews/{id}: one review, what it is about (the summary and the
// stage outputs an approval may edit, prefilled) and the decision.
func (s *Server) reviewPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.loadReviewDetail(r)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	reviewer, signedIn := reviewerOf(r)
	s.render(w, r, "review", map[string]any{"R": d, "Reviewer": reviewer, "SignedIn": signedIn})
}

// GET /api/reviews/{id}: the review with its editable content.
func (s *Server) apiReview(w http.ResponseWriter, r *http.Request) {
	d, err := s.loadReviewDetail(r)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// decisionBody is what the page posts with an action.
type decisionBody struct {
	By      string            `json:"by"`
	Comment string            `json:"comment"`
	Edits   map[string]string `json:"edits"`
}

// POST /api/reviews/{id}/claim|release|approve|reject
func (s *Server) apiReviewAction(w http.ResponseWriter, r *http.Request) {
	action := pipeline.ReviewAction(r.PathValue("action"))
	switch action {
	case pipeline.ActionClaim, pipeline.ActionRelease, pipeline.ActionApprove, pipeline.ActionReject:
	default:
		writeError(w, http.StatusNotFound, "no such review action: "+string(action)+" (claim, release, approve or reject)")
		return
	}
	var body decisionBody
	if r.ContentLength != 0 {
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxDecisionBytes))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			writeError(w, http.StatusBadRequest, "a review action takes JSON {by, comment, edits}: "+err.Error())
			return
		}
	}
	d := pipeline.Decision{Action: action, Comment: body.Comment, Edits: body.Edits}
	if id := identityFrom(r.Context()); id.verified {
		// A user's own token says who acts; a name in the body must agree.
		if body.By != "" && body.By != id.user.Name {
			writeError(w, http.StatusForbidden, "you are signed in as "+id.user.Name+", not "+body.By)
			return
		}
		d.By, d.Groups = id.user.Name, id.user.Groups
	} else {
		d.By, d.Unverified = body.By, true
		if d.By == "" {
			if c, err := r.Cookie(reviewerCookie); err == nil {
				d.By, _ = url.QueryUnescape(c.Value)
			}
		}
	}
	if d.By == "" {
		writeError(w, http.StatusBadRequest, "say who you are: every review action records who took it")
		return
	}
	if len(body.Edits) > 0 && action != pipeline.ActionApprove {
		writeError(w, http.StatusBadRequest, "only an approval carries edits")
		return
	}
	id := r.PathValue("id")
	wf, stage, err := pipeline.ParseReviewID(id)
	if err != nil {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	if len(body.Edits) > 0 {
		if err := s.checkEdits(r, wf, stage, body.Edits); err != nil {
			s.writeReviewFailure(w, r, err)
			return
		}
	}
	v, err := review.Decide(r.Context(), s.opts.Repo, s.opts.Blobs, s.opts.ReviewCallback, id, d)
	if err != nil {
		s.writeReviewFailure(w, r, err)
		return
	}
	if v.State.Decided() && s.opts.OnReviewDecided != nil {
		s.opts.OnReviewDecided(v)
	}
	writeJSON(w, http.StatusOK, newReviewView(v, time.Now()))
}

// badEditError is an edit the review's pipeline cannot make; the API
// names the edit, so that the page shows the error beside its field.
type badEditError struct {
	edit string
	err  error
}

func (e badEditError) Error() string { return e.err.Error() }

func (s *Server) checkEdits(r *http.Request, wf, stage string, edits map[string]string) error {
	v, err := s.opts.Repo.GetReview(r.Context(), wf, stage)
	if err != nil {
		return err
	}
	def, err := s.opts.Repo.Definition(r.Context(), v.Pipeline, v.PipelineVersion)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(edits)) {
		if err := review.CheckEdit(def, name); err != nil {
			return badEditError{name, err}
		}
	}
	return nil
}

// writeReviewFailure answers a refused action: 409 when someone else took
// the review first, 403 when it is someone else's, 400 for an edit that
// cannot be made.
func (s *Server) writeReviewFailure(w http.ResponseWriter, r *http.Request, err error) {
	var bad badEditError
	switch {
	case errors.As(err, &bad):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error(), "edit": bad.edit})
	case errors.Is(err, pipeline.ErrReviewDecided):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, pipeline.ErrNotReviewer):
		writeError(w, http.StatusForbidden, err.Error())
	default:
		s.writeFailure(w, r, err)
	}
}
