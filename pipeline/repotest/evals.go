package repotest

import (
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

var evalTests = []struct {
	name string
	fn   func(t *testing.T, tb table.Table, cfg tabletest.Config)
}{
	{"EvalRunsNewestFirst", testEvalRuns},
	{"EvalRunInvalid", testEvalRunInvalid},
}

// evalRun is a run of name@version on truth set "truth" scoring score.
func evalRun(name string, version int, score float64) pipeline.EvalRun {
	pages := 0.5
	return pipeline.EvalRun{
		Pipeline: name, Version: version, Project: "eval-project",
		Truth: pipeline.TruthSet{Name: "truth", Hash: "9f2c0e"},
		Score: score, Documents: 6, MeanSeconds: 0.25, Pages: &pages,
		Fields: []pipeline.EvalFieldScore{{Path: "facts.total", Score: score}, {Path: "language", Score: 1}},
		Cost:   pipeline.EvalCost{Transitions: 42, InputTokens: 1200, OutputTokens: 80, PriceUSD: 0.0123, Unpriced: []string{"local-model"}},
	}
}

// stepClock is a clock that moves on by a second when told.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *stepClock) Step() { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(time.Second) }

func evalScores(runs []pipeline.EvalRun) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = r.Score
	}
	return out
}

// testEvalRuns: a pipeline's evaluation runs read back newest first, all
// versions in one Query and one version's in another, paged; runs in the
// same instant are kept apart; and they share the pipeline's partition
// without showing in its versions or workflows.
func testEvalRuns(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	clock := &stepClock{now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	repo := pipeline.NewRepository(tb, pipeline.WithClock(clock.Now))
	def := newPipeline("evaluated")
	apply(t, repo, def, 1, true)
	def2 := def.Clone()
	def2.Description = "evaluated again"
	apply(t, repo, def2, 2, true)
	other := newPipeline("not evaluated here")

	// Scores tell the runs apart: 0.1 is the oldest, 0.6 the newest.
	var stored []pipeline.EvalRun
	for i, version := range []int{1, 2, 1, 2, 1, 1} {
		if i != 5 { // the last two runs share an instant
			clock.Step()
		}
		run, err := repo.RecordEvalRun(ctx, evalRun(def.Name, version, float64(i+1)/10))
		if err != nil {
			t.Fatalf("RecordEvalRun %d: %v", i, err)
		}
		if run.ID == "" || !run.At.Equal(clock.Now()) {
			t.Fatalf("run %d recorded as %s at %v, want an id at %v", i, run.ID, run.At, clock.Now())
		}
		stored = append(stored, run)
	}
	if _, err := repo.RecordEvalRun(ctx, evalRun(other.Name, 1, 0.9)); err != nil {
		t.Fatal(err)
	}

	// Every version, newest first, two a page.
	var all []pipeline.EvalRun
	token, pages := "", 0
	for {
		page, next, err := repo.ListEvalRuns(ctx, def.Name, 2, token)
		if err != nil {
			t.Fatalf("ListEvalRuns: %v", err)
		}
		if len(page) > 2 {
			t.Fatalf("ListEvalRuns gave %d runs on a page of 2", len(page))
		}
		all, pages = append(all, page...), pages+1
		if token = next; token == "" || pages > 10 {
			break
		}
	}
	if got, want := evalScores(all), []float64{0.6, 0.5, 0.4, 0.3, 0.2, 0.1}; !slices.Equal(got, want) {
		t.Fatalf("ListEvalRuns = %v, want newest first %v", got, want)
	}
	// What is read is what was recorded, every field of it.
	for i, run := range all {
		if want := stored[len(stored)-1-i]; !reflect.DeepEqual(run, want) {
			t.Fatalf("run read back as\n%+v\nwant %+v", run, want)
		}
	}
	newest, _, err := repo.ListEvalRuns(ctx, def.Name, 3, "")
	if err != nil || !slices.Equal(evalScores(newest), []float64{0.6, 0.5, 0.4}) {
		t.Fatalf("the last 3 runs = %v, %v", evalScores(newest), err)
	}

	// One version's runs.
	for version, want := range map[int][]float64{1: {0.6, 0.5, 0.3, 0.1}, 2: {0.4, 0.2}, 3: {}} {
		runs, next, err := repo.ListVersionEvalRuns(ctx, def.Name, version, 10, "")
		if err != nil || next != "" {
			t.Fatalf("ListVersionEvalRuns(%d): next %q, %v", version, next, err)
		}
		if !slices.Equal(evalScores(runs), want) {
			t.Errorf("ListVersionEvalRuns(%d) = %v, want %v", version, evalScores(runs), want)
		}
		for _, r := range runs {
			if r.Version != version || r.Pipeline != def.Name {
				t.Errorf("ListVersionEvalRuns(%d) gave a run of %s", version, r)
			}
		}
	}
	runs, _, err := repo.ListEvalRuns(ctx, other.Name, 10, "")
	if err != nil || len(runs) != 1 || runs[0].Pipeline != other.Name {
		t.Fatalf("another pipeline's runs = %+v, %v", runs, err)
	}

	// The pipeline's versions and workflows read as before.
	if got := historyVersions(t, repo, def.Name); !slices.Equal(got, []int{2, 1}) {
		t.Fatalf("history beside evaluation runs = %v, want [2 1]", got)
	}
	if v, err := repo.GetPipeline(ctx, def.Name, 0); err != nil || v.Version != 2 {
		t.Fatalf("GetPipeline(current) beside evaluation runs = %d, %v", v.Version, err)
	}
	if wfs, _, err := repo.ListPipelineWorkflows(ctx, def.Name, 10, ""); err != nil || len(wfs) != 0 {
		t.Fatalf("ListPipelineWorkflows lists %d items (%v): evaluation runs are no workflows", len(wfs), err)
	}
}

// testEvalRunInvalid: a run that names no stored-looking version, a name
// that breaks keys, a score out of range or no truth set is refused and
// writes nothing.
func testEvalRunInvalid(t *testing.T, tb table.Table, _ tabletest.Config) {
	ctx := t.Context()
	repo := pipeline.NewRepository(tb)
	name := newPipeline("").Name
	for what, change := range map[string]func(*pipeline.EvalRun){
		"version 0":      func(r *pipeline.EvalRun) { r.Version = 0 },
		"name with #":    func(r *pipeline.EvalRun) { r.Pipeline = name + "#x" },
		"empty name":     func(r *pipeline.EvalRun) { r.Pipeline = "" },
		"score above 1":  func(r *pipeline.EvalRun) { r.Score = 1.5 },
		"negative score": func(r *pipeline.EvalRun) { r.Score = -0.1 },
		"no truth hash":  func(r *pipeline.EvalRun) { r.Truth.Hash = "" },
	} {
		run := evalRun(name, 1, 0.5)
		change(&run)
		if _, err := repo.RecordEvalRun(ctx, run); err == nil || errors.Is(err, table.ErrConditionFailed) {
			t.Errorf("%s: err = %v, want it refused", what, err)
		}
	}
	if runs, _, err := repo.ListEvalRuns(ctx, name, 10, ""); err != nil || len(runs) != 0 {
		t.Fatalf("refused runs were stored: %+v, %v", runs, err)
	}
}
