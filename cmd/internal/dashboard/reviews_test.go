package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// openReview parks a new analysis on a review stage opened at the given
// time (a past one makes it overdue now).
func (b *testBundle) openReview(t *testing.T, name string, spec pipeline.ReviewSpec, at time.Time) pipeline.Review {
	t.Helper()
	reg := b.register(t, name, pipeline.WorkflowWaitingReview, "")
	repo := pipeline.NewRepository(b.repo.Table(), pipeline.WithClock(func() time.Time { return at }))
	st := pipeline.Stage{Name: "check", Scope: pipeline.ScopeDocument, Run: pipeline.RunSpec{Review: &spec}}
	v, err := repo.OpenReview(context.Background(), reg.Ref(), st, pipeline.StepProgress{FileName: name}, "")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (b *testBundle) act(t *testing.T, id, action, body string, cookie string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/reviews/"+id+"/"+action, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: cookie})
	}
	return b.do(t, req)
}

type reviewsBody struct {
	Reviews []reviewView `json:"reviews"`
}

func TestReviewsListAndOverdue(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	late := b.openReview(t, "late.txt", pipeline.ReviewSpec{Assign: []string{"alice"}, DueSeconds: 3600}, time.Now().Add(-2*time.Hour))
	soon := b.openReview(t, "soon.txt", pipeline.ReviewSpec{Group: "legal", DueSeconds: 3600}, time.Now())

	var all, overdue, mine reviewsBody
	b.get(t, "/api/reviews").json(t, &all)
	if len(all.Reviews) != 2 || all.Reviews[0].ID != late.ID || !all.Reviews[0].Overdue || all.Reviews[1].Overdue {
		t.Fatalf("open reviews: %+v", all.Reviews)
	}
	b.get(t, "/api/reviews?overdue=1").json(t, &overdue)
	if len(overdue.Reviews) != 1 || overdue.Reviews[0].ID != late.ID {
		t.Fatalf("overdue reviews: %+v", overdue.Reviews)
	}
	b.get(t, "/api/reviews?mine=bob").json(t, &mine)
	if len(mine.Reviews) != 1 || mine.Reviews[0].ID != soon.ID {
		t.Fatalf("bob's reviews (the group's only): %+v", mine.Reviews)
	}

	page := b.get(t, "/reviews")
	expectCode(t, page, http.StatusOK)
	for _, want := range []string{late.ID, soon.ID, `id="overdue"`, "group legal", "(overdue)"} {
		if !strings.Contains(string(page.body), want) {
			t.Errorf("reviews page lacks %q", want)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/reviews?overdue=1", nil)
	req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: "carol%20c"})
	page = b.do(t, req)
	if body := string(page.body); strings.Contains(body, soon.ID) || !strings.Contains(body, `value="carol c"`) {
		t.Errorf("overdue page lists the one due later, or forgot the reviewer's name:\n%s", body)
	}
	if r := b.get(t, "/api/analyses?status=waiting_review"); r.code != http.StatusOK {
		t.Fatalf("waiting_review listing: %d %s", r.code, r.body)
	}
	snap, err := b.server.snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Counts["waiting_review"] != 2 || snap.Counts["in_progress"] != 0 {
		t.Fatalf("counts %v", snap.Counts)
	}
}

func TestReviewActions(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var heard []string
	b := setup(t, func(o *Options) {
		// Edits are checked against the review's pipeline: the built-in one.
		o.Repo = pipeline.NewRepository(o.Repo.Table(), pipeline.WithBuiltinPipeline(pipelinefile.Default()))
		o.OnReviewDecided = func(v pipeline.Review) { mu.Lock(); heard = append(heard, v.ID); mu.Unlock() }
	})
	v := b.openReview(t, "a.txt", pipeline.ReviewSpec{Assign: []string{"alice", "bob"}, DueSeconds: 3600}, time.Now())

	expectCode(t, b.act(t, v.ID, "approve", `{}`, ""), http.StatusBadRequest) // nobody named
	expectCode(t, b.act(t, v.ID, "approve", `{"by":"mallory"}`, ""), http.StatusForbidden)
	expectCode(t, b.act(t, v.ID, "claim", `{"by":"alice","edits":{"summary":"x"}}`, ""), http.StatusBadRequest)
	expectCode(t, b.act(t, v.ID, "frobnicate", `{"by":"alice"}`, ""), http.StatusNotFound)
	expectCode(t, b.act(t, "not-a-review", "claim", `{"by":"alice"}`, ""), http.StatusNotFound)
	expectCode(t, b.act(t, v.ID, "claim", `{"by":"alice","extra":1}`, ""), http.StatusBadRequest)

	var got reviewView
	r := b.act(t, v.ID, "claim", ``, "alice") // the name from the page's cookie
	expectCode(t, r, http.StatusOK)
	if r.json(t, &got); got.State != pipeline.ReviewClaimed || got.Owner != "alice" {
		t.Fatalf("claim: %+v", got)
	}
	expectCode(t, b.act(t, v.ID, "approve", `{"by":"bob"}`, ""), http.StatusForbidden) // alice's now
	expectCode(t, b.act(t, v.ID, "approve", `{"by":"alice","edits":{"nosuch.field":"1"}}`, ""), http.StatusBadRequest)
	r = b.act(t, v.ID, "approve", `{"by":"alice","comment":"fine","edits":{"summary":"Checked."}}`, "")
	expectCode(t, r, http.StatusOK)
	if r.json(t, &got); got.State != pipeline.ReviewApproved || got.DecidedBy != "alice" || got.Edits["summary"] != "Checked." {
		t.Fatalf("approve: %+v", got)
	}
	expectCode(t, b.act(t, v.ID, "reject", `{"by":"alice"}`, ""), http.StatusConflict)
	if len(heard) != 1 || heard[0] != v.ID {
		t.Fatalf("decisions heard: %v", heard)
	}

	w := b.openReview(t, "b.txt", pipeline.ReviewSpec{DueSeconds: 3600}, time.Now())
	r = b.act(t, w.ID, "reject", `{"by":"dan","comment":"wrong file"}`, "")
	expectCode(t, r, http.StatusOK)
	if r.json(t, &got); got.State != pipeline.ReviewRejected || got.Comment != "wrong file" {
		t.Fatalf("reject: %+v", got)
	}
	trs, err := b.repo.ListTransitions(context.Background(), w.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) == 0 || trs[len(trs)-1].Actor != "dan" {
		t.Fatalf("the audit trail does not name the reviewer: %+v", trs)
	}
}

// Two reviewers deciding at once through the API: exactly one wins.
func TestReviewRaceOneWins(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	v := b.openReview(t, "a.txt", pipeline.ReviewSpec{DueSeconds: 3600}, time.Now())
	codes := make([]int, 2)
	var wg sync.WaitGroup
	for i, who := range []string{"alice", "bob"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = b.act(t, v.ID, "approve", `{"by":"`+who+`"}`, "").code
		}()
	}
	wg.Wait()
	ok, conflict := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
			conflict++
		}
	}
	if ok != 1 || conflict != 1 {
		t.Fatalf("codes %v, want one 200 and one 409", codes)
	}
}

func TestReviewPostsRefusedCrossSite(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	v := b.openReview(t, "a.txt", pipeline.ReviewSpec{DueSeconds: 3600}, time.Now())
	req := httptest.NewRequest(http.MethodPost, "/api/reviews/"+v.ID+"/approve", strings.NewReader(`{"by":"alice"}`))
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	expectCode(t, b.do(t, req), http.StatusForbidden)
	got, err := b.repo.GetReview(context.Background(), v.WorkflowID, v.Stage)
	if err != nil || got.State != pipeline.ReviewOpen {
		t.Fatalf("a cross-site post decided the review: %+v, %v", got, err)
	}
	expectCode(t, b.get(t, "/api/reviews/"+v.ID+"/approve"), http.StatusMethodNotAllowed)
}
