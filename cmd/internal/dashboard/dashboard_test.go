package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// fakeStarter registers uploads without running them and records re-runs.
type fakeStarter struct {
	ig     *pipeline.Ingester
	mu     sync.Mutex
	reruns []string
}

func (f *fakeStarter) Upload(ctx context.Context, project, fileName string, body io.Reader) (pipeline.Registration, error) {
	if err := f.ig.EnsureProject(ctx, project, project); err != nil {
		return pipeline.Registration{}, err
	}
	return f.ig.Register(ctx, pipeline.IngestRequest{ProjectID: project, FileName: fileName, FileURI: "upload:" + fileName, Body: body})
}

func (f *fakeStarter) Rerun(_ context.Context, id string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reruns = append(f.reruns, id)
	return []string{"segment_prep"}, nil
}

type testBundle struct {
	repo    *pipeline.Repository
	blobs   blob.Store
	ig      *pipeline.Ingester
	starter *fakeStarter
	server  *Server
	handler http.Handler
}

func setup(t testing.TB, mod func(*Options)) *testBundle {
	t.Helper()
	dir := t.TempDir()
	tbl, err := sqlitetable.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	blobs, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := pipeline.NewRepository(tbl)
	ig := &pipeline.Ingester{Repo: repo, Blobs: blobs, Definition: pipelinefile.Default(), Bucket: "local"}
	if err := ig.EnsureProject(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	st := &fakeStarter{ig: ig}
	o := Options{Repo: repo, Blobs: blobs, Starter: st}
	if mod != nil {
		mod(&o)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &testBundle{repo: repo, blobs: blobs, ig: ig, starter: st, server: srv, handler: srv.Handler()}
}

// register creates one analysis with the given status.
func (b *testBundle) register(t testing.TB, name string, status pipeline.WorkflowStatus, reason string) pipeline.Registration {
	t.Helper()
	ctx := context.Background()
	reg, err := b.ig.Register(ctx, pipeline.IngestRequest{ProjectID: "default", FileName: name, FileURI: "upload:" + name, Body: strings.NewReader("content of " + name)})
	if err != nil {
		t.Fatal(err)
	}
	if status != pipeline.WorkflowPending {
		if _, err := b.repo.SetWorkflowStatus(ctx, reg.Ref(), []pipeline.WorkflowStatus{pipeline.WorkflowPending}, status, reason); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// addSegments gives an analysis n done segments with text and analysis.
func (b *testBundle) addSegments(t testing.TB, reg pipeline.Registration, n int) {
	t.Helper()
	ctx := context.Background()
	ref := reg.Ref()
	batchKey := pipeline.BatchAnalysisBlobKey(ref, 1)
	segs := make([]pipeline.Segment, n)
	entries := make([]stageoutput.BatchEntry, n)
	for i := range segs {
		idx := i + 1
		segs[i] = pipeline.Segment{WorkflowID: ref.WorkflowID, Index: idx, Kind: "page", Status: pipeline.SegmentDone, TextKey: pipeline.SegmentTextBlobKey(ref, idx), ResultKey: batchKey, Chars: 20}
		if err := blob.PutBytes(ctx, b.blobs, segs[i].TextKey, fmt.Appendf(nil, "text of segment %d", idx)); err != nil {
			t.Fatal(err)
		}
		entries[i] = stageoutput.BatchEntry{Index: idx, Status: pipeline.SegmentDone, Result: &analyze.SegmentResult{Language: "en", Keywords: []analyze.Keyword{{Term: fmt.Sprintf("kw%d", idx), Count: 2}}}}
	}
	raw, _ := json.Marshal(entries)
	if err := blob.PutBytes(ctx, b.blobs, batchKey, raw); err != nil {
		t.Fatal(err)
	}
	if err := b.repo.PutSegments(ctx, segs); err != nil {
		t.Fatal(err)
	}
}

type response struct {
	code   int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

func (r response) errorText(t testing.TB) string {
	t.Helper()
	var e struct{ Error string }
	r.json(t, &e)
	if e.Error == "" {
		t.Fatalf("no error message in %q", r.body)
	}
	return e.Error
}

// do serves req. httptest's default Host, example.com, becomes 127.0.0.1,
// what a browser on this machine sends.
func (b *testBundle) do(t testing.TB, req *http.Request) response {
	t.Helper()
	if req.Host == "example.com" {
		req.Host = "127.0.0.1"
	}
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, req)
	return response{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

func (b *testBundle) get(t testing.TB, url string) response {
	t.Helper()
	return b.do(t, httptest.NewRequest(http.MethodGet, url, nil))
}

func expectCode(t testing.TB, r response, want int) {
	t.Helper()
	if r.code != want {
		t.Fatalf("status %d, want %d; body %s", r.code, want, r.body)
	}
}

type listBody struct {
	Analyses   []progressView `json:"analyses"`
	NextCursor string         `json:"next_cursor"`
}

func TestListPagesThroughTheStatusIndex(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	want := map[string]bool{}
	for i := range 7 {
		reg := b.register(t, fmt.Sprintf("f%d.txt", i), pipeline.WorkflowFailed, fmt.Sprintf("reason %d", i))
		want[reg.Workflow.ID] = true
	}
	b.register(t, "running.txt", pipeline.WorkflowInProgress, "")

	var got []progressView
	cursor, pages := "", 0
	for {
		r := b.get(t, "/api/analyses?status=failed&limit=3&cursor="+cursor)
		expectCode(t, r, http.StatusOK)
		var lb listBody
		r.json(t, &lb)
		got = append(got, lb.Analyses...)
		pages++
		if lb.NextCursor == "" {
			break
		}
		cursor = lb.NextCursor
	}
	if pages != 3 || len(got) != 7 {
		t.Fatalf("%d analyses in %d pages, want 7 in 3", len(got), pages)
	}
	for i, p := range got {
		if !want[p.WorkflowID] || p.Status != "failed" || !strings.HasPrefix(p.Error, "reason") {
			t.Errorf("unexpected %+v", p)
		}
		delete(want, p.WorkflowID)
		if i > 0 && got[i-1].UpdatedAt < p.UpdatedAt {
			t.Errorf("not newest first at %d", i)
		}
	}

	r := b.get(t, "/api/analyses?status=in_progress")
	expectCode(t, r, http.StatusOK)
	var lb listBody
	r.json(t, &lb)
	if len(lb.Analyses) != 1 || lb.Analyses[0].FileName != "running.txt" {
		t.Fatalf("in progress: %+v", lb.Analyses)
	}
}

func TestListRejectsBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	other := encodeCursor("in_progress#2026-01-01T00:00:00.000000000Z#X")
	for _, url := range []string{
		"/api/analyses?status=completed",
		"/api/analyses?status=failed&cursor=***",
		"/api/analyses?status=failed&cursor=bm90IGEgY3Vyc29y",
		"/api/analyses?status=failed&cursor=" + other,
		"/api/analyses?status=failed&limit=0",
		"/api/analyses?status=failed&limit=many",
	} {
		r := b.get(t, url)
		expectCode(t, r, http.StatusBadRequest)
		r.errorText(t)
	}
}

func TestAnalysis(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	reg := b.register(t, "a.txt", pipeline.WorkflowFailed, "broken")
	r := b.get(t, "/api/analyses/"+reg.Workflow.ID)
	expectCode(t, r, http.StatusOK)
	var v analysisView
	r.json(t, &v)
	if v.Workflow.FileName != "a.txt" || v.Progress.Status != "failed" || v.Progress.Error != "broken" || len(v.Steps) == 0 || v.Steps[0].Name != "segment_prep" {
		t.Fatalf("analysis %+v", v)
	}
	r = b.get(t, "/api/analyses/01ZZZZZZZZZZZZZZZZZZZZZZZZ")
	expectCode(t, r, http.StatusNotFound)
	r.errorText(t)
}

func TestSegmentsPaged(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	reg := b.register(t, "doc.txt", pipeline.WorkflowInProgress, "")
	b.addSegments(t, reg, 5)
	if err := b.repo.UpdateWorkflowInfo(context.Background(), reg.Ref(), pipeline.WorkflowInfo{TotalSegments: ptr(5)}); err != nil {
		t.Fatal(err)
	}
	base := "/api/analyses/" + reg.Workflow.ID + "/segments"
	var all []segmentCell
	cursor := ""
	for {
		r := b.get(t, base+"?limit=2&cursor="+cursor)
		expectCode(t, r, http.StatusOK)
		var page struct {
			Segments   []segmentCell `json:"segments"`
			Total      int           `json:"total"`
			NextCursor string        `json:"next_cursor"`
		}
		r.json(t, &page)
		all = append(all, page.Segments...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(all) != 5 || all[0].Index != 1 || all[4].Index != 5 || all[2].Status != "done" {
		t.Fatalf("segments %+v", all)
	}
	expectCode(t, b.get(t, base+"?cursor=zero"), http.StatusBadRequest)
	expectCode(t, b.get(t, base+"?cursor=-3"), http.StatusBadRequest)
	expectCode(t, b.get(t, base+"?limit=100000"), http.StatusBadRequest)
	expectCode(t, b.get(t, "/api/analyses/01ZZZZZZZZZZZZZZZZZZZZZZZZ/segments"), http.StatusNotFound)
}

func ptr[T any](v T) *T { return &v }

func TestSegmentDetail(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	reg := b.register(t, "doc.txt", pipeline.WorkflowInProgress, "")
	b.addSegments(t, reg, 3)
	r := b.get(t, "/api/analyses/"+reg.Workflow.ID+"/segments/2")
	expectCode(t, r, http.StatusOK)
	var d struct {
		Segment  pipeline.Segment      `json:"segment"`
		Text     string                `json:"text"`
		Analysis analyze.SegmentResult `json:"analysis"`
	}
	r.json(t, &d)
	if d.Segment.Index != 2 || d.Text != "text of segment 2" || d.Analysis.Language != "en" || d.Analysis.Keywords[0].Term != "kw2" {
		t.Fatalf("segment %+v", d)
	}
	expectCode(t, b.get(t, "/api/analyses/"+reg.Workflow.ID+"/segments/9"), http.StatusNotFound)
	expectCode(t, b.get(t, "/api/analyses/"+reg.Workflow.ID+"/segments/two"), http.StatusBadRequest)
	expectCode(t, b.get(t, "/api/analyses/"+reg.Workflow.ID+"/segments/0"), http.StatusBadRequest)
	expectCode(t, b.get(t, "/api/analyses/01ZZZZZZZZZZZZZZZZZZZZZZZZ/segments/1"), http.StatusNotFound)
}

func multipartBody(t testing.TB, files map[string]string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, content := range files {
		w, err := mw.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, content)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

func uploadRequest(t testing.TB, files map[string]string) *http.Request {
	body, ct := multipartBody(t, files)
	req := httptest.NewRequest(http.MethodPost, "/api/uploads", body)
	req.Header.Set("Content-Type", ct)
	return req
}

func TestUpload(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.MaxUploadBytes = 64 })
	r := b.do(t, uploadRequest(t, map[string]string{"../../etc/notes.md": "# Notes\n\nsmall", "b.txt": "hello"}))
	expectCode(t, r, http.StatusCreated)
	var out struct{ Uploads []uploadResult }
	r.json(t, &out)
	if len(out.Uploads) != 2 {
		t.Fatalf("uploads %+v", out)
	}
	for _, u := range out.Uploads {
		if u.Status != "pending" || u.URL != "/analyses/"+u.WorkflowID || strings.Contains(u.File, "/") {
			t.Errorf("upload %+v", u)
		}
		reg, err := b.repo.GetProgress(context.Background(), u.WorkflowID)
		if err != nil {
			t.Fatal(err)
		}
		wf, err := b.repo.GetWorkflow(context.Background(), reg.DocumentID, u.WorkflowID)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := b.repo.GetDocument(context.Background(), "default", wf.DocumentID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(doc.BlobKey, "notes") || strings.Contains(doc.BlobKey, "..") {
			t.Errorf("blob key %q built from the file name", doc.BlobKey)
		}
	}

	r = b.do(t, uploadRequest(t, map[string]string{"big.txt": strings.Repeat("x", 65)}))
	expectCode(t, r, http.StatusRequestEntityTooLarge)
	if msg := r.errorText(t); !strings.Contains(msg, "64 bytes") {
		t.Errorf("message %q does not name the limit", msg)
	}

	req := httptest.NewRequest(http.MethodPost, "/api/uploads", strings.NewReader(`{"file":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	expectCode(t, b.do(t, req), http.StatusUnsupportedMediaType)

	expectCode(t, b.do(t, uploadRequest(t, nil)), http.StatusBadRequest)
}

func TestRerun(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	failed := b.register(t, "f.txt", pipeline.WorkflowFailed, "broken")
	running := b.register(t, "r.txt", pipeline.WorkflowInProgress, "")
	post := func(id string) response {
		return b.do(t, httptest.NewRequest(http.MethodPost, "/api/analyses/"+id+"/rerun", nil))
	}
	r := post(failed.Workflow.ID)
	expectCode(t, r, http.StatusAccepted)
	if len(b.starter.reruns) != 1 || b.starter.reruns[0] != failed.Workflow.ID {
		t.Fatalf("reruns %v", b.starter.reruns)
	}
	expectCode(t, post(running.Workflow.ID), http.StatusConflict)
	expectCode(t, post("01ZZZZZZZZZZZZZZZZZZZZZZZZ"), http.StatusNotFound)
	expectCode(t, b.get(t, "/api/analyses/"+failed.Workflow.ID+"/rerun"), http.StatusMethodNotAllowed)
}

func TestCrossSitePostRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	failed := b.register(t, "f.txt", pipeline.WorkflowFailed, "broken")

	req := httptest.NewRequest(http.MethodPost, "/api/analyses/"+failed.Workflow.ID+"/rerun", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	expectCode(t, b.do(t, req), http.StatusForbidden)

	req = uploadRequest(t, map[string]string{"a.txt": "a"})
	req.Header.Set("Origin", "https://evil.example")
	expectCode(t, b.do(t, req), http.StatusForbidden)

	req = httptest.NewRequest(http.MethodPost, "/api/analyses/"+failed.Workflow.ID+"/rerun", nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	expectCode(t, b.do(t, req), http.StatusAccepted)
	if len(b.starter.reruns) != 1 {
		t.Fatalf("cross-site requests reached the starter: %v", b.starter.reruns)
	}
}

func TestToken(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.Token = "s3cret-s3cret-s3cret" })
	expectCode(t, b.get(t, "/api/analyses"), http.StatusUnauthorized)
	expectCode(t, b.get(t, "/"), http.StatusUnauthorized)
	expectCode(t, b.get(t, "/?token=wrong"), http.StatusUnauthorized)

	req := httptest.NewRequest(http.MethodGet, "/api/analyses", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	expectCode(t, b.do(t, req), http.StatusUnauthorized)
	req.Header.Set("Authorization", "Bearer s3cret-s3cret-s3cret")
	expectCode(t, b.do(t, req), http.StatusOK)

	r := b.get(t, "/failed?token=s3cret-s3cret-s3cret")
	expectCode(t, r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/failed" {
		t.Errorf("redirect to %q keeps the token or loses the page", loc)
	}
	cookies := (&http.Response{Header: r.header}).Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies %+v", cookies)
	}
	req = httptest.NewRequest(http.MethodGet, "/failed", nil)
	req.AddCookie(cookies[0])
	expectCode(t, b.do(t, req), http.StatusOK)
}

func TestCheckListen(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"[::1]:8080", "", true},
		{"localhost:0", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"192.168.1.4:8080", "", false},
		{"0.0.0.0:8080", strings.Repeat("t", MinTokenLength), true},
		{"0.0.0.0:8080", "short", false},
		{"no-port", "", false},
	} {
		err := CheckListen(c.addr, c.token, false)
		if (err == nil) != c.ok {
			t.Errorf("CheckListen(%q, %q) = %v", c.addr, c.token, err)
		}
	}
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, url := range []string{"/", "/assets/app.js", "/api/analyses", "/api/nope", "/analyses/01ZZZZZZZZZZZZZZZZZZZZZZZZ"} {
		r := b.get(t, url)
		if r.header.Get("Content-Security-Policy") != contentSecurityPolicy || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", url, r.header)
		}
	}
	expectCode(t, b.get(t, "/api/nope"), http.StatusNotFound)
}

func TestPagesRender(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	failed := b.register(t, "<b>f</b>.txt", pipeline.WorkflowFailed, "<script>bad</script>")
	b.register(t, "running.txt", pipeline.WorkflowInProgress, "")
	for _, url := range []string{"/", "/failed", "/projects", "/projects?project=nobody", "/upload", "/analyses/" + failed.Workflow.ID} {
		r := b.get(t, url)
		expectCode(t, r, http.StatusOK)
		if bytes.Contains(r.body, []byte("<script>bad")) || bytes.Contains(r.body, []byte("<b>f</b>")) {
			t.Errorf("%s: user text not escaped", url)
		}
		if bytes.Contains(r.body, []byte("<script>")) || bytes.Contains(r.body, []byte(" style=")) {
			t.Errorf("%s: inline script or style breaks the CSP", url)
		}
	}
	if r := b.get(t, "/failed"); !bytes.Contains(r.body, []byte("&lt;script&gt;bad")) {
		t.Errorf("failed page does not show the reason: %s", r.body)
	}
	expectCode(t, b.get(t, "/analyses/01ZZZZZZZZZZZZZZZZZZZZZZZZ"), http.StatusNotFound)
	expectCode(t, b.get(t, "/failed?cursor=junk"), http.StatusBadRequest)
}

func TestEventsStream(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.register(t, "running.txt", pipeline.WorkflowInProgress, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.server.Run(ctx)
	ts := httptest.NewServer(b.handler)
	defer ts.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	buf := make([]byte, 0, 4096)
	for !bytes.Contains(buf, []byte("\n\n")) || !bytes.Contains(buf, []byte("event: snapshot")) {
		chunk := make([]byte, 1024)
		n, err := resp.Body.Read(chunk)
		if err != nil {
			t.Fatal(err)
		}
		buf = append(buf, chunk[:n]...)
	}
	_, data, _ := strings.Cut(string(buf), "event: snapshot\ndata: ")
	data, _, _ = strings.Cut(data, "\n")
	var snap Snapshot
	if err := json.Unmarshal([]byte(data), &snap); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	if snap.Counts["in_progress"] != 1 || len(snap.Running) != 1 || snap.Running[0].FileName != "running.txt" {
		t.Fatalf("snapshot %+v", snap)
	}
}

// One poll serves every subscriber: the cost of the live stream does not
// grow with the number of browsers.
func TestBrokerPollsOnceForAllSubscribers(t *testing.T) {
	t.Parallel()
	reads := 0
	br := newBroker(func(context.Context) (Snapshot, error) {
		reads++
		return Snapshot{Running: []progressView{{WorkflowID: "W1", UpdatedAt: fmt.Sprint(reads)}}}, nil
	}, DefaultMaxLiveSubscribers)
	var subs []chan []byte
	for range 50 {
		ch, cancel, _ := br.subscribe()
		defer cancel()
		subs = append(subs, ch)
	}
	br.pollOnce(context.Background())
	br.pollOnce(context.Background())
	if reads != 2 {
		t.Fatalf("%d reads for 2 polls", reads)
	}
	for _, ch := range subs {
		var snap Snapshot
		if err := json.Unmarshal(<-ch, &snap); err != nil {
			t.Fatal(err)
		}
		if len(snap.Changed) != 1 || snap.Changed[0] != "W1" || snap.Running[0].UpdatedAt != "2" {
			t.Fatalf("subscriber got %+v, want the latest snapshot with W1 changed", snap)
		}
	}
	// a subscriber arriving later starts from the latest snapshot
	late, cancel, _ := br.subscribe()
	defer cancel()
	if len(<-late) == 0 {
		t.Fatal("late subscriber got nothing")
	}
}

func TestGraphSVG(t *testing.T) {
	t.Parallel()
	g := analyze.Graph{
		Nodes: []analyze.Node{{ID: "keyword:a<b", Label: "a<b", Kind: "keyword", Weight: 5}, {ID: "person:Ann", Label: "Ann", Kind: "person", Weight: 2}, {ID: "keyword:c", Label: "c", Kind: "keyword", Weight: 1}},
		Edges: []analyze.Edge{{Source: "keyword:a<b", Target: "person:Ann", Weight: 2}},
	}
	var one, two bytes.Buffer
	writeGraphSVG(&one, g)
	writeGraphSVG(&two, g)
	if one.String() != two.String() {
		t.Fatal("layout is not deterministic")
	}
	s := one.String()
	if !strings.HasPrefix(s, "<svg") || !strings.Contains(s, "a&lt;b") || strings.Count(s, "<circle") != 3 || strings.Count(s, "<line") != 1 {
		t.Fatalf("svg %s", s)
	}

	b := setup(t, nil)
	reg := b.register(t, "g.txt", pipeline.WorkflowInProgress, "")
	expectCode(t, b.get(t, "/analyses/"+reg.Workflow.ID+"/graph.svg"), http.StatusNotFound)
	raw, _ := json.Marshal(g)
	if err := blob.PutBytes(context.Background(), b.blobs, pipeline.GraphBlobKey(reg.Ref()), raw); err != nil {
		t.Fatal(err)
	}
	r := b.get(t, "/analyses/"+reg.Workflow.ID+"/graph.svg")
	expectCode(t, r, http.StatusOK)
	if r.header.Get("Content-Type") != "image/svg+xml" || string(r.body) != s {
		t.Fatalf("graph route: %s", r.header)
	}
}

// A finished step's message is a note; only a failed step's is a reason.
func TestStepNoteIsNotAnError(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	reg := b.register(t, "a.txt", pipeline.WorkflowInProgress, "")
	ref := reg.Ref()
	if _, err := b.repo.TransitionSteps(ctx, ref, pipeline.StepChange{Step: "segment_prep", From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepCompleted, Error: "4 segments done, 0 failed, 0 skipped"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.repo.TransitionSteps(ctx, ref, pipeline.StepChange{Step: "format_parser", From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepFailed, Error: "corrupt xref table"}); err != nil {
		t.Fatal(err)
	}
	r := b.get(t, "/api/analyses/"+reg.Workflow.ID)
	expectCode(t, r, http.StatusOK)
	var v analysisView
	r.json(t, &v)
	steps := map[string]stepView{}
	for _, s := range v.Steps {
		steps[s.Name] = s
	}
	if s := steps["segment_prep"]; s.Note != "4 segments done, 0 failed, 0 skipped" || s.Error != "" {
		t.Errorf("completed step %+v", s)
	}
	if s := steps["format_parser"]; s.Error != "corrupt xref table" || s.Note != "" {
		t.Errorf("failed step %+v", s)
	}
	page := string(b.get(t, "/analyses/"+reg.Workflow.ID).body)
	if !strings.Contains(page, `<td class="note">4 segments done`) || !strings.Contains(page, `<td class="reason">corrupt xref table`) {
		t.Errorf("steps table does not tell notes from failures:\n%s", page)
	}
}

// A long step's recorded progress reaches the API, the overview and the
// analysis page with the time left at the rate so far.
func TestStepProgressAndETA(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	reg := b.register(t, "big.pdf", pipeline.WorkflowInProgress, "")
	if _, err := b.repo.TransitionSteps(ctx, reg.Ref(), pipeline.StepChange{Step: pipeline.StepFormatParser, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	prog, err := b.repo.GetProgress(ctx, reg.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	started, err := time.Parse(time.RFC3339Nano, prog.Steps[pipeline.StepFormatParser].StartedAt)
	if err != nil {
		t.Fatal(err)
	}
	// 100 of 400 pages in 10 s: 300 left at 0.1 s a page.
	at := pipeline.FormatTime(started.Add(10 * time.Second))
	if ok, err := b.repo.RecordStepProgress(ctx, reg.Workflow.ID, pipeline.StepFormatParser, pipeline.StepRunProgress{Done: 100, Total: 400, Unit: "pages", At: at}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var v analysisView
	b.get(t, "/api/analyses/"+reg.Workflow.ID).json(t, &v)
	p := v.Progress
	if p.StepDone != 100 || p.StepTotal != 400 || p.StepPercent != 25 || p.ETA != "30s" || p.StepText != "format_parser 100/400 pages, ETA 30s" {
		t.Errorf("progress %+v", p)
	}
	for _, url := range []string{"/", "/analyses/" + reg.Workflow.ID} {
		if page := string(b.get(t, url).body); !strings.Contains(page, "format_parser 100/400 pages, ETA 30s") {
			t.Errorf("%s does not show the step's progress", url)
		}
	}
}

func TestFormatETA(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		42*time.Second + 300*time.Millisecond:        "42s",
		2*time.Minute + 8*time.Second:                "2m10s",
		3*time.Hour + 20*time.Minute + 5*time.Second: "3h20m",
	} {
		if got := formatETA(d); got != want {
			t.Errorf("formatETA(%v) = %q, want %q", d, got, want)
		}
	}
}

// The Failed page and the API name the step a failed analysis failed in.
func TestFailedAnalysisNamesItsStep(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	reg := b.register(t, "a.pdf", pipeline.WorkflowInProgress, "")
	if _, err := b.repo.TransitionSteps(ctx, reg.Ref(), pipeline.StepChange{Step: pipeline.StepFormatParser, From: []pipeline.StepStatus{pipeline.StepPending}, To: pipeline.StepFailed, Error: "corrupt xref table"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.repo.SetWorkflowStatus(ctx, reg.Ref(), []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}, pipeline.WorkflowFailed, "corrupt xref table"); err != nil {
		t.Fatal(err)
	}
	r := b.get(t, "/api/analyses?status=failed")
	expectCode(t, r, http.StatusOK)
	var list struct {
		Analyses []progressView `json:"analyses"`
	}
	r.json(t, &list)
	if len(list.Analyses) != 1 || list.Analyses[0].FailedStep != pipeline.StepFormatParser {
		t.Errorf("failed analyses %+v, want one that failed in %s", list.Analyses, pipeline.StepFormatParser)
	}
	if page := string(b.get(t, "/failed").body); !strings.Contains(page, "<td>"+pipeline.StepFormatParser+"</td>") {
		t.Errorf("the Failed page does not name the step that failed:\n%s", page)
	}
}
