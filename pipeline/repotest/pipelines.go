package repotest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

var pipelineTests = []struct {
	name string
	fn   func(t *testing.T, tb table.Table, cfg tabletest.Config)
}{
	{"PipelineVersionsImmutable", testPipelineVersions},
	{"PipelineApplyConcurrent", testPipelineApplyConcurrent},
	{"PipelineStage", testPipelineStage},
	{"PipelineSourceDir", testPipelineSourceDir},
	{"PipelineBuiltinFallback", testPipelineBuiltin},
	{"PipelineWorkflowsNewestFirst", testPipelineWorkflows},
	{"PipelineWorkflowKeepsVersion", testPipelineWorkflowKeepsVersion},
	{"ProjectSettings", testProjectSettings},
	{"ProjectUpdateRace", testProjectUpdateRace},
	{"ProjectAdmission", testProjectAdmission},
	{"ProjectAdmissionLimit", testProjectAdmissionLimit},
	{"ProjectAdmissionRecount", testProjectAdmissionRecount},
	{"ProjectAdmissionRace", testProjectAdmissionRace},
}

// newPipeline returns the default pipeline under a name no other test uses;
// description tells versions apart.
func newPipeline(description string) pipeline.Definition {
	def := pipelinefile.Default().Clone()
	def.Name = "tt" + pipeline.NewID()
	def.Source = nil // where a file was read is not stored
	def.Description = description
	return def
}

func apply(t *testing.T, repo *pipeline.Repository, def pipeline.Definition, wantVersion int, wantCreated bool) {
	t.Helper()
	v, created, err := repo.ApplyPipeline(t.Context(), def)
	if err != nil || v != wantVersion || created != wantCreated {
		t.Fatalf("ApplyPipeline(%s, %.20q) = %d, %v, %v; want %d, %v", def.Name, def.Description, v, created, err, wantVersion, wantCreated)
	}
}

func historyVersions(t *testing.T, repo *pipeline.Repository, name string) []int {
	t.Helper()
	hist, err := repo.PipelineHistory(t.Context(), name)
	if err != nil {
		t.Fatalf("PipelineHistory(%s): %v", name, err)
	}
	var vs []int
	for _, h := range hist {
		if h.Name != name || h.ContentHash == "" || h.CreatedAt.IsZero() {
			t.Fatalf("history entry %+v is incomplete", h)
		}
		vs = append(vs, h.Version)
	}
	return vs
}

func testPipelineVersions(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	v1 := newPipeline("first")
	apply(t, repo, v1, 1, true)
	apply(t, repo, v1, 1, false) // same content: nothing new

	v2 := v1.Clone()
	v2.Description = "second"
	v2.Stages[len(v2.Stages)-1].TimeoutSeconds = 42
	apply(t, repo, v2, 2, true)
	apply(t, repo, v1, 3, true) // going back is a new version, never a rewrite of 1

	for _, c := range []struct {
		version int
		want    pipeline.Definition
	}{{1, v1}, {2, v2}, {3, v1}, {0, v1}} {
		got, err := repo.GetPipeline(ctx, v1.Name, c.version)
		if err != nil {
			t.Fatalf("GetPipeline(%d): %v", c.version, err)
		}
		if !reflect.DeepEqual(got.Definition, c.want) || got.ContentHash != c.want.ContentHash() || got.Stages != len(c.want.Stages) {
			t.Fatalf("GetPipeline(%d) = %+v\nwant %+v", c.version, got.Definition, c.want)
		}
		if c.version > 0 && got.Version != c.version {
			t.Fatalf("GetPipeline(%d) says version %d", c.version, got.Version)
		}
	}
	if _, err := repo.GetPipeline(ctx, v1.Name, 4); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("GetPipeline(4) = %v, want ErrNotFound", err)
	}
	if _, err := repo.GetPipeline(ctx, "tt"+pipeline.NewID(), 0); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("GetPipeline(unknown) = %v, want ErrNotFound", err)
	}
	if got := historyVersions(t, repo, v1.Name); !slices.Equal(got, []int{3, 2, 1}) {
		t.Fatalf("history = %v, want newest first [3 2 1]", got)
	}
	list, err := repo.ListPipelines(ctx)
	if err != nil {
		t.Fatalf("ListPipelines: %v", err)
	}
	i := slices.IndexFunc(list, func(p pipeline.PipelineSummary) bool { return p.Name == v1.Name })
	if i < 0 || list[i].Version != 3 || list[i].Description != "first" {
		t.Fatalf("ListPipelines has %s as %+v, want version 3", v1.Name, list)
	}
	if !slices.IsSortedFunc(list, func(a, b pipeline.PipelineSummary) int { return cmpString(a.Name, b.Name) }) {
		t.Fatalf("ListPipelines is not by name")
	}

	if _, _, err := repo.ApplyPipeline(ctx, pipeline.Definition{Name: v1.Name}); err == nil {
		t.Fatal("ApplyPipeline accepted a pipeline without stages")
	}
	if got := historyVersions(t, repo, v1.Name); len(got) != 3 {
		t.Fatalf("a refused apply left history %v", got)
	}
}

// The folder a version was applied from is stored with it, outside its
// content: the same content from another folder is the same version, which
// keeps its first folder.
func testPipelineSourceDir(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	def := newPipeline("")
	def.Dir = "/srv/pipelines/first"
	apply(t, pipeline.NewRepository(tb), def, 1, true)
	moved := def.Clone()
	moved.Dir = "/srv/pipelines/second"
	apply(t, pipeline.NewRepository(tb), moved, 1, false)
	repo := pipeline.NewRepository(tb)
	got, err := repo.GetPipeline(ctx, def.Name, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.SourceDir != def.Dir || got.Definition.Dir != def.Dir {
		t.Fatalf("GetPipeline: source_dir %q, definition dir %q; want %q", got.SourceDir, got.Definition.Dir, def.Dir)
	}
	resolved, err := repo.Definition(ctx, def.Name, 1)
	if err != nil || resolved.Dir != def.Dir {
		t.Fatalf("Definition: dir %q, %v; want %q", resolved.Dir, err, def.Dir)
	}

	// Where a version runs on AWS is recorded on it, leaving it as it was.
	const arn = "arn:aws:states:us-east-1:000000000000:stateMachine:docpipe-x-v1"
	if err := repo.SetPipelineStateMachine(ctx, def.Name, 1, arn); err != nil {
		t.Fatal(err)
	}
	if got, err = repo.GetPipeline(ctx, def.Name, 1); err != nil || got.StateMachineARN != arn || got.ContentHash != def.ContentHash() {
		t.Fatalf("after SetPipelineStateMachine: %+v, %v", got, err)
	}
	if err := repo.SetPipelineStateMachine(ctx, def.Name, 2, arn); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("SetPipelineStateMachine of a version never applied = %v, want ErrNotFound", err)
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func testPipelineApplyConcurrent(t *testing.T, tb table.Table, cfg tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	base := newPipeline("")
	defs := make([]pipeline.Definition, 2)
	for i := range defs {
		defs[i] = base.Clone()
		defs[i].Description = fmt.Sprintf("racer %d", i)
	}
	versions := make([]int, len(defs))
	var mu sync.Mutex
	cfg.Race(len(defs), func(w int) {
		v, created, err := repo.ApplyPipeline(ctx, defs[w])
		if err != nil || !created {
			t.Errorf("racer %d: version %d created=%v err=%v", w, v, created, err)
		}
		mu.Lock()
		versions[w] = v
		mu.Unlock()
	})
	slices.Sort(versions)
	if !slices.Equal(versions, []int{1, 2}) {
		t.Fatalf("racing applies got versions %v, want 1 and 2", versions)
	}
	if got := historyVersions(t, repo, base.Name); !slices.Equal(got, []int{2, 1}) {
		t.Fatalf("history = %v, want [2 1]", got)
	}
	cur, err := repo.GetPipeline(ctx, base.Name, 0)
	if err != nil || cur.Version != 2 {
		t.Fatalf("current = %+v, %v; want version 2", cur, err)
	}
	for _, v := range []int{1, 2} {
		got, err := repo.GetPipeline(ctx, base.Name, v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(defs, func(d pipeline.Definition) bool { return d.ContentHash() == got.ContentHash }) {
			t.Fatalf("version %d holds content no racer applied", v)
		}
	}
}

func testPipelineStage(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	def := newPipeline("stages")
	apply(t, repo, def, 1, true)
	for _, want := range def.Stages {
		got, err := repo.GetPipelineStage(ctx, def.Name, 1, want.Name)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("GetPipelineStage(%s) = %+v, %v; want %+v", want.Name, got, err, want)
		}
	}
	last := def.Stages[len(def.Stages)-1]
	if got, err := repo.GetPipelineStage(ctx, def.Name, 0, last.Name); err != nil || got.Name != last.Name {
		t.Fatalf("GetPipelineStage(current, %s) = %+v, %v", last.Name, got, err)
	}
	if _, err := repo.GetPipelineStage(ctx, def.Name, 1, "nope"); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("GetPipelineStage(nope) = %v, want ErrNotFound", err)
	}
}

func testPipelineBuiltin(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	builtin := newPipeline("built in")
	repo := pipeline.NewRepository(tb, pipeline.WithBuiltinPipeline(builtin))
	for _, name := range []string{"", builtin.Name} {
		got, err := repo.Definition(ctx, name, 0)
		if err != nil || got.ContentHash() != builtin.ContentHash() {
			t.Fatalf("Definition(%q, 0) before any apply = %v, want the built-in", name, err)
		}
	}
	if _, err := repo.Definition(ctx, "tt"+pipeline.NewID(), 0); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("Definition(unknown) = %v, want ErrNotFound", err)
	}
	stored := builtin.Clone()
	stored.Description = "stored"
	apply(t, repo, stored, 1, true)
	got, err := repo.Definition(ctx, "", 0)
	if err != nil || got.Description != "stored" {
		t.Fatalf("Definition(\"\", 0) after apply = %q, %v; want the stored version", got.Description, err)
	}
}

// newPipelineWorkflow creates a workflow recorded as running name@version.
func newPipelineWorkflow(t *testing.T, repo *pipeline.Repository, projectID, name string, version int, stages []pipeline.Stage) pipeline.Workflow {
	t.Helper()
	doc := newDocument(projectID, newSHA())
	wf := newWorkflowFor(doc)
	wf.Pipeline, wf.PipelineVersion = name, version
	if err := repo.CreateWorkflow(t.Context(), doc, wf, stages); err != nil {
		t.Fatalf("CreateWorkflow: %v", err)
	}
	return wf
}

func testPipelineWorkflows(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	def := newPipeline("listed")
	apply(t, repo, def, 1, true)
	projectID := "proj" + pipeline.NewID()
	var want []string
	for range 5 {
		wf := newPipelineWorkflow(t, repo, projectID, def.Name, 1, def.Stages)
		want = append([]string{wf.ID}, want...)
	}
	// Another pipeline's workflow and one naming none stay out of the list.
	newPipelineWorkflow(t, repo, projectID, "tt"+pipeline.NewID(), 1, def.Stages)
	newPipelineWorkflow(t, repo, projectID, "", 0, def.Stages)

	var got []string
	token := ""
	for pages := 0; ; pages++ {
		page, next, err := repo.ListPipelineWorkflows(ctx, def.Name, 2, token)
		if err != nil {
			t.Fatalf("ListPipelineWorkflows: %v", err)
		}
		for _, wf := range page {
			if wf.Pipeline != def.Name || wf.PipelineVersion != 1 {
				t.Fatalf("listed workflow %s runs %s@%d", wf.ID, wf.Pipeline, wf.PipelineVersion)
			}
			got = append(got, wf.ID)
		}
		if next == "" {
			break
		}
		if pages > len(want) {
			t.Fatal("ListPipelineWorkflows does not end")
		}
		token = next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ListPipelineWorkflows = %v, want newest first %v", got, want)
	}
}

func testPipelineWorkflowKeepsVersion(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	v1 := newPipeline("v1")
	apply(t, repo, v1, 1, true)
	wf := newPipelineWorkflow(t, repo, "proj"+pipeline.NewID(), v1.Name, 1, v1.Stages)
	if _, err := repo.Definition(ctx, v1.Name, 1); err != nil { // now cached
		t.Fatal(err)
	}

	v2 := v1.Clone()
	v2.Description = "v2"
	v2.Stages = v2.Stages[:len(v2.Stages)-1]
	apply(t, repo, v2, 2, true)

	meta, err := repo.GetWorkflow(ctx, wf.DocumentID, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	prog := progress(t, repo, wf.ID)
	listed, _, err := repo.ListProjectWorkflows(ctx, wf.ProjectID, 0, "")
	if err != nil || len(listed) != 1 {
		t.Fatalf("ListProjectWorkflows = %v, %v", listed, err)
	}
	for what, got := range map[string]string{
		"metadata":         fmt.Sprintf("%s@%d", meta.Pipeline, meta.PipelineVersion),
		"step item":        fmt.Sprintf("%s@%d", prog.Pipeline, prog.PipelineVersion),
		"project workflow": fmt.Sprintf("%s@%d", listed[0].Pipeline, listed[0].PipelineVersion),
	} {
		if want := v1.Name + "@1"; got != want {
			t.Fatalf("%s records %s, want %s", what, got, want)
		}
	}
	// A running workflow resolves the version it recorded, by a fresh
	// repository (no cache) as well.
	for _, r := range []*pipeline.Repository{repo, pipeline.NewRepository(tb)} {
		def, err := r.Definition(ctx, meta.Pipeline, meta.PipelineVersion)
		if err != nil || def.ContentHash() != v1.ContentHash() {
			t.Fatalf("workflow on %s@1 resolves %q, %v; want v1", v1.Name, def.Description, err)
		}
		cur, err := r.Definition(ctx, v1.Name, 0)
		if err != nil || cur.ContentHash() != v2.ContentHash() {
			t.Fatalf("current resolves %q, %v; want v2", cur.Description, err)
		}
	}
	// The progress items a run changes leave the pipeline alone.
	if _, err := repo.SetWorkflowStatus(ctx, refOf(wf), []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowInProgress, ""); err != nil {
		t.Fatal(err)
	}
	if p := progress(t, repo, wf.ID); p.Pipeline != v1.Name || p.PipelineVersion != 1 {
		t.Fatalf("after a status change the step item records %s@%d", p.Pipeline, p.PipelineVersion)
	}
}

func testProjectSettings(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	id := "proj" + pipeline.NewID()
	off := false
	p := pipeline.Project{ID: id, Name: "Contracts", Settings: pipeline.ProjectSettings{
		Language: "de", DocumentPrompt: "Supplier contracts.", Pipeline: "contracts",
		OCR: pipeline.OCRSettings{Enabled: &off, Languages: []string{"deu", "eng"}},
	}}
	if err := repo.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	got, err := repo.GetProject(ctx, id)
	if err != nil || !reflect.DeepEqual(got.Settings, p.Settings) || got.Settings.OCR.On() {
		t.Fatalf("GetProject = %+v, %v; want settings %+v", got, err, p.Settings)
	}
	updated, err := repo.UpdateProject(ctx, id, func(p *pipeline.Project) error {
		p.Settings.Pipeline = "contracts@2"
		p.Settings.OCR.Enabled = nil
		p.CreatedAt = p.CreatedAt.AddDate(1, 0, 0) // not the caller's to change
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	again, err := repo.GetProject(ctx, id)
	if err != nil || !reflect.DeepEqual(again, updated) {
		t.Fatalf("stored %+v, UpdateProject returned %+v (%v)", again, updated, err)
	}
	if again.Settings.Pipeline != "contracts@2" || !again.Settings.OCR.On() || !again.CreatedAt.Equal(got.CreatedAt) || again.Settings.Language != "de" {
		t.Fatalf("after update: %+v", again)
	}
	refuse := errors.New("refused")
	if _, err := repo.UpdateProject(ctx, id, func(*pipeline.Project) error { return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("a refused change returned %v", err)
	}
	if _, err := repo.UpdateProject(ctx, "proj"+pipeline.NewID(), func(*pipeline.Project) error { return nil }); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("UpdateProject(missing) = %v, want ErrNotFound", err)
	}
}

// testProjectUpdateRace: every racing change lands; none overwrites another.
func testProjectUpdateRace(t *testing.T, tb table.Table, cfg tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	id := "proj" + pipeline.NewID()
	if err := repo.CreateProject(ctx, pipeline.Project{ID: id}); err != nil {
		t.Fatal(err)
	}
	racers := min(cfg.Racers, 6) // each retry re-reads: keep within the repository's attempts
	cfg.Race(racers, func(w int) {
		_, err := repo.UpdateProject(ctx, id, func(p *pipeline.Project) error {
			p.Settings.OCR.Languages = append(p.Settings.OCR.Languages, fmt.Sprintf("l%02d", w))
			return nil
		})
		if err != nil && !errors.Is(err, table.ErrTransactionConflict) {
			t.Errorf("racer %d: %v", w, err)
		}
	})
	p, err := repo.GetProject(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Settings.OCR.Languages) != p.Revision {
		t.Fatalf("%d changes recorded in revision %d: %v", len(p.Settings.OCR.Languages), p.Revision, p.Settings.OCR.Languages)
	}
	if p.Revision == 0 {
		t.Fatal("no change landed")
	}
}
