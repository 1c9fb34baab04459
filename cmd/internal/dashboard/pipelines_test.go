package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// pipelineFixture stores docpipe@1 (the default), docpipe@2 (OCR only for
// images, a longer parser timeout) and other@1, and registers analyses:
// three of docpipe@1, two of docpipe@2 and one of other@1, in that order.
func pipelineFixture(t *testing.T, b *testBundle) (docpipeIDs []string) {
	t.Helper()
	ctx := context.Background()
	v1 := pipelinefile.Default()
	v2 := v1.Clone()
	for i := range v2.Stages {
		switch v2.Stages[i].Name {
		case pipeline.StepOCR:
			v2.Stages[i].When = &pipeline.When{Format: []string{pipeline.FormatImage}, Pages: &pipeline.PageRange{Min: 1}}
		case pipeline.StepFormatParser:
			v2.Stages[i].TimeoutSeconds = 900
		}
	}
	other := v1.Clone()
	other.Name, other.Description = "other", "<i>another</i> pipeline"
	for _, def := range []pipeline.Definition{v1, v2, other} {
		if _, created, err := b.repo.ApplyPipeline(ctx, def); err != nil || !created {
			t.Fatalf("apply %s: created %v, %v", def.Name, created, err)
		}
	}
	register := func(def pipeline.Definition, version int, name string) string {
		ig := &pipeline.Ingester{Repo: b.repo, Blobs: b.blobs, Definition: def, Bucket: "local"}
		reg, err := ig.Register(ctx, pipeline.IngestRequest{
			ProjectID: "default", FileName: name, FileURI: "upload:" + name, Body: strings.NewReader(name),
			Pipeline: def.Name, PipelineVersion: version,
		})
		if err != nil {
			t.Fatal(err)
		}
		return reg.Workflow.ID
	}
	for i := range 3 {
		docpipeIDs = append(docpipeIDs, register(v1, 1, fmt.Sprintf("v1-%d.txt", i)))
	}
	for i := range 2 {
		docpipeIDs = append(docpipeIDs, register(v2, 2, fmt.Sprintf("v2-%d.txt", i)))
	}
	register(other, 1, "other.txt")
	return docpipeIDs
}

func TestPipelinesAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ids := pipelineFixture(t, b)

	var list struct{ Pipelines []pipeline.PipelineSummary }
	r := b.get(t, "/api/pipelines")
	expectCode(t, r, http.StatusOK)
	r.json(t, &list)
	if len(list.Pipelines) != 2 || list.Pipelines[0].Name != "docpipe" || list.Pipelines[0].Version != 2 || list.Pipelines[1].Name != "other" {
		t.Fatalf("pipelines %+v, want docpipe@2 and other@1", list.Pipelines)
	}

	var hist struct {
		Current  int
		Versions []pipeline.PipelineVersion
	}
	r = b.get(t, "/api/pipelines/docpipe")
	expectCode(t, r, http.StatusOK)
	r.json(t, &hist)
	if hist.Current != 2 || len(hist.Versions) != 2 || hist.Versions[0].Version != 2 || hist.Versions[1].Version != 1 {
		t.Fatalf("history %+v, want versions 2 then 1", hist)
	}

	var v versionView
	r = b.get(t, "/api/pipelines/docpipe/versions/current")
	expectCode(t, r, http.StatusOK)
	r.json(t, &v)
	if v.Version != 2 || len(v.StageRows) != len(pipelinefile.Default().Stages) || len(v.Definition.Stages) != len(v.StageRows) {
		t.Fatalf("current version %d with %d stage rows", v.Version, len(v.StageRows))
	}
	rows := map[string]stageRow{}
	for _, row := range v.StageRows {
		rows[row.Name] = row
	}
	if got := rows[pipeline.StepOCR]; got.When != "format=image pages=1..-" || got.Run != "builtin ocr" || got.Needs != pipeline.StepFormatParser {
		t.Errorf("ocr row %+v", got)
	}
	if got := rows[pipeline.StepFormatParser]; got.Timeout != "15m0s" || got.Retry == "" || got.Scope != string(pipeline.ScopeDocument) {
		t.Errorf("format_parser row %+v", got)
	}
	r = b.get(t, "/api/pipelines/docpipe/versions/1")
	expectCode(t, r, http.StatusOK)
	r.json(t, &v)
	for _, row := range v.StageRows {
		if row.When != "-" {
			t.Errorf("version 1 stage %s has when %q", row.Name, row.When)
		}
	}

	// The analyses of docpipe, newest first, two a page; other's are not
	// among them.
	var got []string
	cursor, pages := "", 0
	for {
		var page struct {
			Analyses   []pipeline.Workflow
			NextCursor string `json:"next_cursor"`
		}
		r := b.get(t, "/api/pipelines/docpipe/analyses?limit=2&cursor="+cursor)
		expectCode(t, r, http.StatusOK)
		r.json(t, &page)
		for _, wf := range page.Analyses {
			got = append(got, wf.ID)
		}
		pages++
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	want := make([]string, len(ids))
	for i, id := range ids {
		want[len(ids)-1-i] = id
	}
	if pages != 3 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%d pages of %v, want 3 pages of %v", pages, got, want)
	}

	for url, code := range map[string]int{
		"/api/pipelines/nobody":                      http.StatusNotFound,
		"/api/pipelines/docpipe/versions/3":          http.StatusNotFound,
		"/api/pipelines/docpipe/versions/x":          http.StatusBadRequest,
		"/api/pipelines/docpipe/versions/0":          http.StatusBadRequest,
		"/api/pipelines/docpipe/analyses?cursor=bad": http.StatusBadRequest,
		"/api/pipelines/docpipe/analyses?limit=0":    http.StatusBadRequest,
	} {
		if r := b.get(t, url); r.code != code {
			t.Errorf("%s: status %d, want %d; %s", url, r.code, code, r.body)
		}
	}
}

func TestPipelinesPages(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	r := b.get(t, "/pipelines")
	expectCode(t, r, http.StatusOK)
	if !bytes.Contains(r.body, []byte("No stored pipelines")) {
		t.Errorf("empty pipelines page: %s", r.body)
	}
	pipelineFixture(t, b)

	r = b.get(t, "/pipelines")
	expectCode(t, r, http.StatusOK)
	for _, s := range []string{`href="/pipelines/docpipe?version=2"`, "docpipe@2", "other@1", "&lt;i&gt;another"} {
		if !bytes.Contains(r.body, []byte(s)) {
			t.Errorf("pipelines page lacks %q", s)
		}
	}
	if !bytes.Contains(r.body, []byte(`href="/pipelines" aria-current="page"`)) {
		t.Error("the nav does not mark the pipelines page")
	}

	r = b.get(t, "/pipelines/docpipe")
	expectCode(t, r, http.StatusOK)
	for _, s := range []string{"Stages of docpipe@2", "docpipe@1", "builtin format_parser", "format=image pages=1..-", "15m0s", "v2-1.txt", "v1-0.txt"} {
		if !bytes.Contains(r.body, []byte(s)) {
			t.Errorf("pipeline page lacks %q", s)
		}
	}
	if bytes.Contains(r.body, []byte("other.txt")) {
		t.Error("pipeline page lists another pipeline's analysis")
	}
	r = b.get(t, "/pipelines/docpipe?version=1")
	expectCode(t, r, http.StatusOK)
	if !bytes.Contains(r.body, []byte("Stages of docpipe@1")) || bytes.Contains(r.body, []byte("format=image")) {
		t.Errorf("version 1 page shows the wrong stages")
	}
	expectCode(t, b.get(t, "/pipelines/nobody"), http.StatusNotFound)
	expectCode(t, b.get(t, "/pipelines/docpipe?version=9"), http.StatusNotFound)
	expectCode(t, b.get(t, "/pipelines/docpipe?version=-1"), http.StatusBadRequest)
	expectCode(t, b.get(t, "/pipelines/docpipe?cursor=junk"), http.StatusBadRequest)
}

// An HTTP stage's URL is shown without its credentials, on the page and
// in the API.
func TestPipelineURLSecretsHidden(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	def := pipelinefile.Default().Clone()
	def.Name = "hooked"
	for i := range def.Stages {
		if def.Stages[i].Name == pipeline.StepOCR {
			def.Stages[i].Run = pipeline.RunSpec{HTTP: "https://user:PASSWORD-91@ocr.example.com/run?api_key=KEY-92&mode=fast"}
		}
	}
	if _, _, err := b.repo.ApplyPipeline(context.Background(), def); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{"/pipelines/hooked", "/api/pipelines/hooked/versions/current"} {
		r := b.get(t, url)
		expectCode(t, r, http.StatusOK)
		if body := string(r.body); !strings.Contains(body, "ocr.example.com") || strings.Contains(body, "PASSWORD-91") || strings.Contains(body, "KEY-92") {
			t.Errorf("%s shows the URL's secrets, or no URL:\n%s", url, r.body)
		}
	}
}

// recordEval keeps an evaluation run of name@version as docpipe eval does.
func recordEval(t *testing.T, b *testBundle, name string, version int, truth string, score float64) pipeline.EvalRun {
	t.Helper()
	pages := 0.75
	run, err := b.repo.RecordEvalRun(context.Background(), pipeline.EvalRun{
		Pipeline: name, Version: version, Project: "eval-" + name,
		Truth: pipeline.TruthSet{Name: truth, Hash: "0123456789abcdef0123456789abcdef"},
		Score: score, Documents: 6, MeanSeconds: 0.25, Pages: &pages,
		Fields: []pipeline.EvalFieldScore{
			{Path: "facts.currency", Score: 0}, {Path: "facts.total", Score: 0.5},
			{Path: "keywords", Score: 0.875}, {Path: "language", Score: 1}, {Path: "summary", Score: 0.625},
		},
		Cost: pipeline.EvalCost{Transitions: 42, InputTokens: 1200, OutputTokens: 80, PriceUSD: 0.0123},
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// The pipeline page's Evaluation section: how to run one while there is
// none, then the kept runs of every version newest first, or of the
// version asked for; server-rendered, escaped, nothing inline.
func TestPipelineEvaluationSection(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	pipelineFixture(t, b)

	r := b.get(t, "/pipelines/docpipe")
	expectCode(t, r, http.StatusOK)
	if !bytes.Contains(r.body, []byte("No evaluation runs yet")) || !bytes.Contains(r.body, []byte("docpipe eval --truth DIR --pipeline docpipe@2")) {
		t.Errorf("the page without evaluation runs does not say how to run one:\n%s", r.body)
	}
	if r := b.get(t, "/pipelines/docpipe?version=1"); !bytes.Contains(r.body, []byte("docpipe eval --truth DIR --pipeline docpipe@1")) {
		t.Errorf("version 1's page does not say how to evaluate version 1")
	}

	recordEval(t, b, "docpipe", 1, "<b>truth</b>", 0.5)
	recordEval(t, b, "docpipe", 2, "truth", 0.9)
	recordEval(t, b, "other", 1, "others-truth", 0.1)

	r = b.get(t, "/pipelines/docpipe")
	expectCode(t, r, http.StatusOK)
	body := string(r.body)
	section := body[strings.Index(body, `id="evaluations"`):]
	section = section[:strings.Index(section, "</table>")]
	for _, s := range []string{
		"docpipe@2", "0.900", "&lt;b&gt;truth&lt;/b&gt; <code>0123456789ab</code>",
		"facts.currency 0.000, facts.total 0.500, summary 0.625; pages 0.750", "<summary>2 more</summary>keywords 0.875, language 1.000",
		"<td>6</td>", "42 transitions, 1200/80 AI tokens, $0.0123", "0.25 s",
	} {
		if !strings.Contains(section, s) {
			t.Errorf("the evaluation table lacks %q:\n%s", s, section)
		}
	}
	if v2, v1 := strings.Index(section, "0.900"), strings.Index(section, "0.500</td>"); v2 < 0 || v1 < 0 || v2 > v1 {
		t.Errorf("the runs are not newest first:\n%s", section)
	}
	if strings.Contains(body, "others-truth") || strings.Contains(body, "No evaluation runs") {
		t.Errorf("the page shows another pipeline's run, or says there are none:\n%s", section)
	}
	if strings.Contains(body, "<b>") || strings.Contains(body, "<script>") || strings.Contains(body, " style=") {
		t.Error("the page has unescaped markup, an inline script or an inline style")
	}

	r = b.get(t, "/pipelines/docpipe?version=1")
	expectCode(t, r, http.StatusOK)
	if body := string(r.body); !strings.Contains(body, "Evaluation of docpipe@1") || !strings.Contains(body, "0.500</td>") || strings.Contains(body, "0.900") {
		t.Errorf("version 1's page shows other versions' runs, or not its own")
	}
}
