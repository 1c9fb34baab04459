package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// The overview lists analyses of every status, newest first, filtered and
// paged; a completed one stays listed.
func TestOverviewListsRecentAnalyses(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.register(t, "done.pdf", pipeline.WorkflowCompleted, "")
	b.register(t, "broken.pdf", pipeline.WorkflowFailed, "corrupt file")
	b.register(t, "new.pdf", pipeline.WorkflowPending, "")

	var out struct {
		Analyses []progressView `json:"analyses"`
		Next     string         `json:"next_cursor"`
	}
	b.get(t, "/api/analyses?all=1&limit=2").json(t, &out)
	if len(out.Analyses) != 2 || out.Analyses[0].FileName != "new.pdf" || out.Analyses[1].FileName != "broken.pdf" || out.Next == "" {
		t.Fatalf("first page %+v", out)
	}
	b.get(t, "/api/analyses?all=1&limit=2&cursor="+out.Next).json(t, &out)
	if len(out.Analyses) != 1 || out.Analyses[0].FileName != "done.pdf" || out.Analyses[0].Status != "completed" || out.Next != "" {
		t.Fatalf("second page %+v", out)
	}
	b.get(t, "/api/analyses?all=1&status=failed").json(t, &out)
	if len(out.Analyses) != 1 || out.Analyses[0].Error != "corrupt file" {
		t.Fatalf("failed only %+v", out)
	}
	expectCode(t, b.get(t, "/api/analyses?all=1&status=done"), http.StatusBadRequest)

	page := string(b.get(t, "/?status=completed").body)
	if !strings.Contains(page, "done.pdf") || strings.Contains(page, "broken.pdf") || !strings.Contains(page, `<option selected>completed</option>`) {
		t.Fatalf("overview filtered by completed:\n%s", page)
	}
}

// The projects page lists every project with its counts and pipeline.
func TestProjectsPageListsProjects(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.register(t, "broken.pdf", pipeline.WorkflowFailed, "corrupt file")
	b.register(t, "other.pdf", pipeline.WorkflowInProgress, "")
	expectCode(t, b.do(t, uploadRequestTo(t, "contracts", map[string]string{"a.txt": "hello"})), http.StatusCreated)

	var out struct{ Projects []projectRow }
	b.get(t, "/api/projects").json(t, &out)
	want := []projectRow{
		{ID: "contracts", Name: "contracts", Documents: 1, Pipeline: "docpipe (built-in)"},
		{ID: "default", Name: "default", Documents: 2, Running: 1, Failed: 1, Pipeline: "docpipe (built-in)"},
	}
	if len(out.Projects) != 2 || out.Projects[0] != want[0] || out.Projects[1] != want[1] {
		t.Fatalf("projects %+v, want %+v", out.Projects, want)
	}
	page := string(b.get(t, "/projects").body)
	for _, s := range []string{`href="/projects?project=contracts"`, `href="/upload?project=default"`, `<td>docpipe (built-in)</td>`} {
		if !strings.Contains(page, s) {
			t.Errorf("projects page lacks %s", s)
		}
	}
}

func uploadRequestTo(t testing.TB, project string, files map[string]string) *http.Request {
	body, ct := multipartBody(t, files)
	req := httptest.NewRequest(http.MethodPost, "/api/uploads?project="+project, body)
	req.Header.Set("Content-Type", ct)
	return req
}

// An upload goes into the project it names, which is created if new; a
// name that could leave the project's blob prefix is refused.
func TestUploadIntoAChosenProject(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	r := b.do(t, uploadRequestTo(t, "contracts", map[string]string{"a.txt": "hello"}))
	expectCode(t, r, http.StatusCreated)
	var out struct{ Uploads []uploadResult }
	r.json(t, &out)
	if len(out.Uploads) != 1 || out.Uploads[0].Project != "contracts" {
		t.Fatalf("uploads %+v", out)
	}
	p, err := b.repo.GetProgress(t.Context(), out.Uploads[0].WorkflowID)
	if err != nil || p.ProjectID != "contracts" {
		t.Fatalf("progress %+v, %v", p, err)
	}
	for _, bad := range []string{"..", "a%2Fb", "a%23b"} {
		expectCode(t, b.do(t, uploadRequestTo(t, bad, map[string]string{"a.txt": "x"})), http.StatusBadRequest)
	}
	page := string(b.get(t, "/upload?project=contracts").body)
	if !strings.Contains(page, `value="contracts"`) || !strings.Contains(page, `<strong id="project-pipeline">docpipe (built-in)</strong>`) {
		t.Fatalf("upload page:\n%s", page)
	}
}

// Every page names an icon the server has, so a browser asks for nothing
// that answers 404.
func TestIconServed(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	if !strings.Contains(string(b.get(t, "/").body), `<link rel="icon" href="/assets/icon.svg"`) {
		t.Fatal("layout names no icon")
	}
	expectCode(t, b.get(t, "/assets/icon.svg"), http.StatusOK)
}
