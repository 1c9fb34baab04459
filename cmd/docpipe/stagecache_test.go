package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/search"
)

// cachePipeline writes the example pipeline into dir: an expensive
// segment stage a (a counts its runs in a.count) and a document stage b
// that sums a's answers (b.count). scale is a's setting, label b's.
func cachePipeline(t *testing.T, dir, scale, label string) string {
	t.Helper()
	a := `import json, os, sys
req = json.load(sys.stdin)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "a.count"), "a") as f:
    f.write(req["workflow_id"] + "\n")
print(json.dumps({"words": len(req["segment"]["text"].split()) * req["settings"]["scale"]}))
`
	b := `import json, os, sys
req = json.load(sys.stdin)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "b.count"), "a") as f:
    f.write(req["workflow_id"] + "\n")
total = sum(json.loads(l)["output"]["words"] for l in open(req["inputs"]["needs"]["a"]) if l.strip())
print(json.dumps({"total": total, "label": req["settings"]["label"]}))
`
	file := `name: cachex
stages:
  - name: a
    scope: segment
    needs: [segment_builder]
    run: {command: [python3, a.py]}
    settings: {scale: ` + scale + `}
  - name: b
    needs: [a]
    run: {command: [python3, b.py]}
    settings: {label: ` + label + `}
`
	for name, body := range map[string]string{"a.py": a, "b.py": b, "pipeline.yaml": file} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "pipeline.yaml")
}

// runs is how many times a stage's command of the example ran.
func runs(t *testing.T, dir, stage string) int {
	t.Helper()
	n := 0
	for _, c := range runsBy(t, dir, stage) {
		n += c
	}
	return n
}

// runsBy is how many times a stage's command ran, by workflow.
func runsBy(t *testing.T, dir, stage string) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, stage+".count"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for _, id := range strings.Fields(string(raw)) {
		by[id]++
	}
	return by
}

// threeDocs writes three two-section documents.
func threeDocs(t *testing.T) string {
	t.Helper()
	docs := t.TempDir()
	for i, words := range []string{"apples and pears", "plums", "figs dates and grapes here"} {
		body := "# One\n\nThe first section: " + words + ".\n\n# Two\n\nThe second section is short.\n"
		if err := os.WriteFile(filepath.Join(docs, string(rune('a'+i))+".md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return docs
}

// A stage's output is reused by content: a new version that changes only
// the document stage b runs b for every document and the segment stage a
// for none; changing a's settings runs both. What a reused run leaves
// equals what an uncached run of the same version leaves.
func TestStageCacheReusesUnchangedStages(t *testing.T) {
	t.Parallel()
	home, dir, docs := t.TempDir(), t.TempDir(), threeDocs(t)
	run := func(want ...string) []docResult {
		t.Helper()
		out, _ := cli(t, "run", "--pipeline", "cachex", "--json", "--progress", "none", "--home", home, docs)
		res := decodeLines[docResult](t, out)
		if len(res) != 3 {
			t.Fatalf("run --json = %+v, want 3 documents", res)
		}
		for _, r := range res {
			if !r.succeeded() || r.Reused {
				t.Fatalf("run --json = %+v, want 3 new completed workflows", res)
			}
		}
		return res
	}
	apply := func(scale, label, version string) {
		t.Helper()
		want(t, 0, []string{"cachex@" + version}, "pipeline", "apply", cachePipeline(t, dir, scale, label), "--home", home)
	}
	apply("1", "one", "1")
	run()
	if a, b := runs(t, dir, "a"), runs(t, dir, "b"); a != 6 || b != 3 {
		t.Fatalf("v1: a ran %d times, b %d; want 6 (3 documents × 2 segments) and 3", a, b)
	}

	apply("1", "two", "2")
	v2 := run()
	if a, b := runs(t, dir, "a"), runs(t, dir, "b"); a != 6 || b != 6 {
		t.Fatalf("v2 (b changed): a ran %d times in all, b %d; want 6 (a reused) and 6", a, b)
	}
	status := want(t, 0, []string{"reused"}, "status", "--home", home, v2[0].WorkflowID)
	if !regexpLine(status, `\ba\b.*reused`) || regexpLine(status, `\bb\b.*reused`) {
		t.Errorf("status of a v2 workflow should show a reused and b not:\n%s", status)
	}
	cached := want(t, 0, nil, "show", "--stage", "b", "--home", home, v2[0].WorkflowID)
	if !strings.Contains(cached, `"label": "two"`) && !strings.Contains(cached, `"label":"two"`) {
		t.Fatalf("show --stage b = %s, want v2's label", cached)
	}

	// The same version uncached, elsewhere, gives the same outputs.
	other := t.TempDir()
	want(t, 0, nil, "pipeline", "apply", filepath.Join(dir, "pipeline.yaml"), "--home", other)
	out, _ := cli(t, "run", "--pipeline", "cachex", "--no-cache", "--json", "--progress", "none", "--home", other, docs)
	fresh := decodeLines[docResult](t, out)
	byFile := map[string]string{}
	for _, r := range fresh {
		byFile[r.File] = r.WorkflowID
	}
	for _, r := range v2 {
		for _, stage := range []string{"a", "b"} {
			got := want(t, 0, nil, "show", "--stage", stage, "--home", home, r.WorkflowID)
			uncached := want(t, 0, nil, "show", "--stage", stage, "--home", other, byFile[r.File])
			if got != uncached {
				t.Errorf("%s stage %s: cached run left\n%s\nuncached\n%s", r.File, stage, got, uncached)
			}
		}
	}
	if a, b := runs(t, dir, "a"), runs(t, dir, "b"); a != 12 || b != 9 {
		t.Fatalf("--no-cache: a ran %d times in all, b %d; want 12 and 9 (everything ran)", a, b)
	}

	apply("2", "two", "3")
	run()
	if a, b := runs(t, dir, "a"), runs(t, dir, "b"); a != 18 || b != 12 {
		t.Fatalf("v3 (a's settings changed): a ran %d times in all, b %d; want 18 and 12 (both ran)", a, b)
	}
}

// regexpLine says whether a line of out matches pattern.
func regexpLine(out, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, l := range strings.Split(out, "\n") {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// The example on backfill: onto a version that changes only b, a project
// of three documents runs b three times and a not at all; each new
// workflow supersedes the old one, both ways; the dry run said so first;
// a second backfill finds nothing to do, and one event summarises it.
func TestBackfillReusesUnchangedStages(t *testing.T) {
	t.Parallel()
	home, dir, docs := t.TempDir(), t.TempDir(), threeDocs(t)
	want(t, 0, []string{"cachex@1"}, "pipeline", "apply", cachePipeline(t, dir, "1", "one"), "--home", home)
	out, _ := cli(t, "run", "--pipeline", "cachex", "--json", "--progress", "none", "--home", home, docs)
	v1 := decodeLines[docResult](t, out)
	want(t, 0, []string{"cachex@2"}, "pipeline", "apply", cachePipeline(t, dir, "1", "two"), "--home", home)
	if a, b := runs(t, dir, "a"), runs(t, dir, "b"); a != 6 || b != 3 {
		t.Fatalf("v1: a ran %d times, b %d; want 6 and 3", a, b)
	}

	dry := want(t, 0, []string{"3 documents: 12 stage runs, 6 reused"}, "backfill", "--pipeline", "cachex@2", "--dry-run", "--home", home)
	for _, r := range v1 {
		if !regexpLine(dry, filepath.Base(r.File)+`\s.*cachex@1 `+r.WorkflowID+`\s+segment_prep,ocr,segment_builder,b\s+format_parser,a\s`) {
			t.Errorf("dry run should say %s runs b and reuses a:\n%s", filepath.Base(r.File), dry)
		}
	}
	if a, b := runs(t, dir, "a"), runs(t, dir, "b"); a != 6 || b != 3 {
		t.Fatalf("the dry run ran stages: a %d times, b %d", a, b)
	}

	out = want(t, 0, []string{"3 completed, 0 failed; 12 stages run, 6 reused"}, "backfill", "--pipeline", "cachex@2", "--json", "--progress", "none", "--home", home)
	if a, b := runs(t, dir, "a"), runs(t, dir, "b"); a != 6 || b != 6 {
		t.Fatalf("backfill onto v2: a ran %d times in all, b %d; want 6 (reused) and 6", a, b)
	}
	v2 := decodeLines[docResult](t, out)
	if len(v2) != 3 {
		t.Fatalf("backfill --json = %+v, want 3 documents", v2)
	}
	for _, r := range v2 {
		var d workflowDetail
		decodeJSON(t, want(t, 0, nil, "status", "--json", "--home", home, r.WorkflowID), &d)
		old := d.Workflow.Supersedes
		if d.Workflow.PipelineVersion != 2 || old == "" {
			t.Fatalf("backfilled workflow = %+v, want cachex@2 superseding a v1 workflow", d.Workflow)
		}
		want(t, 0, []string{"superseded by  " + r.WorkflowID}, "status", "--home", home, old)
		want(t, 0, []string{"supersedes     " + old}, "status", "--home", home, r.WorkflowID)
		if !d.Progress.Steps["format_parser"].Reused() {
			t.Errorf("format_parser of %s = %+v, want the extraction reused", r.WorkflowID, d.Progress.Steps["format_parser"])
		}
		// The reused extraction's text is the old workflow's, read in place.
		if got, was := want(t, 0, nil, "show", "--text", "--home", home, r.WorkflowID), want(t, 0, nil, "show", "--text", "--home", home, old); got != was || got == "" {
			t.Errorf("text of %s:\n%s\nwas\n%s", r.WorkflowID, got, was)
		}
	}
	// Search finds the backfilled workflows by the text they reused.
	backfilled := map[string]bool{}
	for _, r := range v2 {
		backfilled[r.WorkflowID] = true
	}
	if hits := searchHits(t, "--home", home, "body: plums"); len(hits) != 1 || !backfilled[hits[0].WorkflowID] || hits[0].Field != "body" {
		t.Errorf("body: plums after the backfill: %+v", hits)
	}
	want(t, 0, []string{"nothing to backfill"}, "backfill", "--pipeline", "cachex@2", "--home", home)

	events := want(t, 0, nil, "events", "--json", "--home", home)
	if n := strings.Count(events, `"backfill.completed"`); n != 1 {
		t.Errorf("%d backfill.completed events, want 1:\n%s", n, events)
	}
}

func decodeJSON(t *testing.T, raw string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
}

// rerun --from runs a stage and every stage after it again on the same
// version: with the cache, unchanged stages find their earlier outputs
// (nothing runs); with --no-cache they run; an unknown stage is a usage
// error.
func TestRerunFromStage(t *testing.T) {
	t.Parallel()
	home, dir, docs := t.TempDir(), t.TempDir(), threeDocs(t)
	want(t, 0, nil, "pipeline", "apply", cachePipeline(t, dir, "1", "one"), "--home", home)
	out, _ := cli(t, "run", "--pipeline", "cachex", "--json", "--progress", "none", "--home", home, filepath.Join(docs, "a.md"))
	id := decodeLines[docResult](t, out)[0].WorkflowID
	before := want(t, 0, nil, "show", "--stage", "b", "--home", home, id)
	check := func(what string, a, b int) {
		t.Helper()
		if ga, gb := runsBy(t, dir, "a")[id], runsBy(t, dir, "b")[id]; ga != a || gb != b {
			t.Fatalf("%s: a ran %d times, b %d; want %d and %d", what, ga, gb, a, b)
		}
		if got := want(t, 0, nil, "show", "--stage", "b", "--home", home, id); got != before {
			t.Fatalf("%s: b's output changed:\n%s\nwas\n%s", what, got, before)
		}
	}
	check("first run", 2, 1)

	want(t, 2, []string{`no stage "nope"`}, "rerun", "--from", "nope", "--home", home, id)
	// What did not run says so: on stderr, and on its step.
	want(t, 0, []string{"completed", "not run again, their definition and inputs unchanged: a, b (--no-cache runs them)"}, "rerun", "--from", "a", "--progress", "none", "--home", home, id)
	check("rerun --from a", 2, 1)
	var d workflowDetail
	decodeJSON(t, want(t, 0, nil, "status", "--json", "--home", home, id), &d)
	if a, b := d.Progress.Steps["a"], d.Progress.Steps["b"]; a.SegmentsOwn != 2 || a.SegmentsRun != 0 || !a.NotRun() || b.Error != pipeline.OwnOutputNote || !b.NotRun() {
		t.Errorf("after rerun --from a: a %+v, b %+v; want both answered as before, not run", a, b)
	}
	if _, stderr, code := cliAll("rerun", "--from", "b", "--no-cache", "--progress", "none", "--home", home, id); code != 0 || strings.Contains(stderr, "not run again") {
		t.Errorf("rerun --from b --no-cache: exit %d, stderr:\n%s", code, stderr)
	}
	check("rerun --from b --no-cache", 2, 2)
	decodeJSON(t, want(t, 0, nil, "status", "--json", "--home", home, id), &d)
	if b := d.Progress.Steps["b"]; b.NotRun() || b.Error != "" {
		t.Errorf("after rerun --from b --no-cache: b %+v, want run", b)
	}
	want(t, 0, []string{"completed"}, "rerun", "--from", "a", "--no-cache", "--progress", "none", "--home", home, id)
	check("rerun --from a --no-cache", 4, 3)
	want(t, 0, []string{"completed"}, "rerun", "--from", "segment_prep", "--progress", "none", "--home", home, id)
	check("rerun --from segment_prep", 4, 3)
	decodeJSON(t, want(t, 0, nil, "status", "--json", "--home", home, id), &d)
	if p := d.Progress; p.Status != pipeline.WorkflowCompleted || p.SegmentsDone != 2 || p.TotalSegments != 2 {
		t.Errorf("after the re-runs: %+v, want completed with 2 segments done", p)
	}
}

// A stage that says cache: false runs every time, even when nothing it
// depends on changed.
func TestStageCacheOffPerStage(t *testing.T) {
	t.Parallel()
	home, dir, docs := t.TempDir(), t.TempDir(), threeDocs(t)
	file := cachePipeline(t, dir, "1", "one")
	raw, _ := os.ReadFile(file)
	off := strings.Replace(string(raw), "    settings: {scale: 1}\n", "    settings: {scale: 1}\n    cache: false\n", 1)
	if off == string(raw) {
		t.Fatal("the pipeline file did not take cache: false")
	}
	os.WriteFile(file, []byte(off), 0o644)
	want(t, 0, nil, "pipeline", "apply", file, "--home", home)
	want(t, 0, nil, "run", "--pipeline", "cachex", "--progress", "none", "--home", home, docs)
	os.WriteFile(file, []byte(strings.Replace(off, "label: one", "label: two", 1)), 0o644)
	want(t, 0, []string{"cachex@2"}, "pipeline", "apply", file, "--home", home)
	want(t, 0, []string{"3 completed, 0 failed"}, "backfill", "--pipeline", "cachex@2", "--progress", "none", "--home", home)
	if a, b := runs(t, dir, "a"), runs(t, dir, "b"); a != 12 || b != 6 {
		t.Fatalf("a (cache: false) ran %d times in all, b %d; want 12 and 6", a, b)
	}
}

// Two stages that run the same command are two stages: each answers as
// itself (the command is told its stage's name), and neither is handed
// the other's cached answer, not even when one is retried after the other
// has finished.
func TestStageCacheKeepsStagesApart(t *testing.T) {
	t.Parallel()
	home, dir, docs := t.TempDir(), t.TempDir(), threeDocs(t)
	// left fails its first try (exit 75: try again); by its retry, right
	// has answered and its answers are in the cache.
	script := `import json, os, sys
req = json.load(sys.stdin)
mark = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tried")
if req["stage"] == "left" and not os.path.exists(mark):
    open(mark, "w").close()
    sys.exit(75)
print(json.dumps({"stage": req["stage"]}))
`
	file := `name: twins
batch_size: 1
stages:
  - name: left
    scope: segment
    needs: [segment_builder]
    run: {command: [python3, echo.py]}
    retry: {attempts: 2, interval: 1s}
  - name: right
    scope: segment
    needs: [segment_builder]
    run: {command: [python3, echo.py]}
`
	for name, body := range map[string]string{"echo.py": script, "pipeline.yaml": file} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want(t, 0, nil, "pipeline", "apply", filepath.Join(dir, "pipeline.yaml"), "--home", home)
	out := want(t, 0, nil, "run", "--pipeline", "twins", "--progress", "none", "--json", "--home", home, filepath.Join(docs, "a.md"))
	var res struct {
		WorkflowID string `json:"workflow_id"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &res); err != nil {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	for _, stage := range []string{"left", "right"} {
		got := want(t, 0, nil, "show", res.WorkflowID, "--stage", stage, "--home", home)
		if n := strings.Count(got, `"stage":"`+stage+`"`); n != 2 || strings.Count(got, `"stage":"`) != 2 {
			t.Fatalf("show --stage %s: want both segments answered by %s\n%s", stage, stage, got)
		}
	}
}

// A reused document stage copies nothing: the backfilled workflow has no
// blob of its own for it, its step points at the producer's, and show,
// status and the stage after it (which reads it as its input) all find
// the output there.
func TestReusedDocumentStagePointsAtItsProducer(t *testing.T) {
	t.Parallel()
	home, dir, docs := t.TempDir(), t.TempDir(), threeDocs(t)
	b := `import json, sys
req = json.load(sys.stdin)
print(json.dumps({"from": req["workflow_id"]}))
`
	c := `import json, sys
req = json.load(sys.stdin)
print(json.dumps({"b": json.load(open(req["inputs"]["needs"]["b"])), "v": req["settings"]["v"]}))
`
	file := func(v string) string {
		path := filepath.Join(dir, "pipeline-"+v+".yaml")
		body := `name: point
stages:
  - name: b
    needs: [segment_builder]
    run: {command: [python3, b.py]}
  - name: c
    needs: [b]
    run: {command: [python3, c.py]}
    settings: {v: ` + v + `}
`
		for name, text := range map[string]string{"b.py": b, "c.py": c, path: body} {
			if !filepath.IsAbs(name) {
				name = filepath.Join(dir, name)
			}
			if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	want(t, 0, []string{"point@1"}, "pipeline", "apply", file("1"), "--home", home)
	want(t, 0, nil, "run", "--pipeline", "point", "--progress", "none", "--home", home, docs)
	want(t, 0, []string{"point@2"}, "pipeline", "apply", file("2"), "--home", home)
	out := want(t, 0, []string{"3 completed, 0 failed"}, "backfill", "--pipeline", "point@2", "--json", "--progress", "none", "--home", home)
	for _, r := range decodeLines[docResult](t, out) {
		var d workflowDetail
		decodeJSON(t, want(t, 0, nil, "status", "--json", "--home", home, r.WorkflowID), &d)
		old, step := d.Workflow.Supersedes, d.Progress.Steps["b"]
		if !step.Reused() || step.ReusedFrom != old || !strings.Contains(step.Output, "/"+old+"/") {
			t.Fatalf("b of %s = %+v, want it reused from %s, pointing at its output", r.WorkflowID, step, old)
		}
		ref := pipeline.WorkflowRef{ProjectID: d.Workflow.ProjectID, DocumentID: d.Workflow.DocumentID, WorkflowID: r.WorkflowID}
		own := pipeline.StageOutputBlobKey(ref, "b")
		if len(filesUnder(t, home, step.Output)) != 1 {
			t.Fatalf("no blob at %s, where b of %s points", step.Output, r.WorkflowID)
		}
		if blobs := filesUnder(t, home, own); len(blobs) != 0 {
			t.Errorf("%s has a blob of its own for the reused stage b: %v", r.WorkflowID, blobs)
		}
		wantOut := `"from": "` + old + `"`
		want(t, 0, []string{wantOut}, "show", "--stage", "b", "--home", home, r.WorkflowID)
		want(t, 0, []string{wantOut, `"v": 2`}, "show", "--stage", "c", "--home", home, r.WorkflowID)
		want(t, 0, []string{"reused", "from " + old}, "status", "--home", home, r.WorkflowID)
	}
}

// filesUnder lists the files of home whose path ends in key.
func filesUnder(t *testing.T, home, key string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(home, func(path string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(filepath.ToSlash(path), key) {
			found = append(found, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// The graph and the summary are reused when the analysis they are built
// from is one the cache has seen (a backfill that changes a later stage),
// pointing at the earlier output, and built when it is new (documents
// of other content).
func TestGraphAndSummaryReusedByTheirAnalysis(t *testing.T) {
	t.Parallel()
	home, dir, docs := t.TempDir(), t.TempDir(), threeDocs(t)
	v1, v2 := filepath.Join(dir, "v1.yaml"), filepath.Join(dir, "v2.yaml")
	os.WriteFile(v1, []byte(backfillBenchPipeline("1")), 0o644)
	os.WriteFile(v2, []byte(backfillBenchPipeline("2")), 0o644)
	want(t, 0, []string{"bench@1"}, "pipeline", "apply", v1, "--home", home)
	out, _ := cli(t, "run", "--pipeline", "bench", "--json", "--progress", "none", "--home", home, docs)
	results := []string{pipeline.StepGraphBuilder, pipeline.StepDocumentSummarizer}
	for _, r := range decodeLines[docResult](t, out) {
		var d workflowDetail
		decodeJSON(t, want(t, 0, nil, "status", "--json", "--home", home, r.WorkflowID), &d)
		for _, name := range results {
			if s := d.Progress.Steps[name]; s.Status != pipeline.StepCompleted || s.Reused() {
				t.Errorf("%s of %s = %+v: a document of its own content should build it", name, r.File, s)
			}
		}
	}
	want(t, 0, []string{"bench@2"}, "pipeline", "apply", v2, "--home", home)
	out = want(t, 0, []string{"3 completed, 0 failed"}, "backfill", "--pipeline", "bench@2", "--json", "--progress", "none", "--home", home)
	for _, r := range decodeLines[docResult](t, out) {
		var d workflowDetail
		decodeJSON(t, want(t, 0, nil, "status", "--json", "--home", home, r.WorkflowID), &d)
		old := d.Workflow.Supersedes
		for _, name := range results {
			if s := d.Progress.Steps[name]; !s.Reused() || s.ReusedFrom != old || s.Output == "" {
				t.Errorf("%s of %s = %+v, want it reused from %s", name, r.WorkflowID, s, old)
			}
		}
		for _, flag := range []string{"--graph", "--summary"} {
			if got, was := want(t, 0, nil, "show", flag, "--home", home, r.WorkflowID), want(t, 0, nil, "show", flag, "--home", home, old); got != was || got == "" {
				t.Errorf("show %s of %s:\n%s\nwas\n%s", flag, r.WorkflowID, got, was)
			}
		}
	}
	// The search index holds each new workflow's reused summary.
	found := map[string]bool{}
	for _, h := range searchHits(t, "--home", home, "summary: section") {
		found[h.WorkflowID] = found[h.WorkflowID] || h.Segment == search.DocumentSegment
	}
	for _, r := range decodeLines[docResult](t, out) {
		if !found[r.WorkflowID] {
			t.Errorf("the summary %s reused is not searchable (hits by workflow: %v)", r.WorkflowID, found)
		}
	}
}

// A command stage's key covers the scripts its command line names:
// editing b.py runs b again and not a; a new version with the scripts as
// they were reuses both; editing a.py runs a again, and b, whose inputs
// (a's answers) did not change, is reused.
func TestStageCacheCoversCommandScripts(t *testing.T) {
	t.Parallel()
	home, dir, docs := t.TempDir(), t.TempDir(), threeDocs(t)
	file := cachePipeline(t, dir, "1", "one")
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	version := 0
	step := func(edit string, wantA, wantB int) {
		t.Helper()
		if edit != "" {
			f, err := os.OpenFile(filepath.Join(dir, edit), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("# edited\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		// A new version of the same stages, for run to start new workflows.
		version++
		next := string(body) + "description: version " + strconv.Itoa(version) + "\n"
		if err := os.WriteFile(file, []byte(next), 0o644); err != nil {
			t.Fatal(err)
		}
		want(t, 0, []string{"cachex@" + strconv.Itoa(version)}, "pipeline", "apply", file, "--home", home)
		out, _ := cli(t, "run", "--pipeline", "cachex", "--json", "--progress", "none", "--home", home, docs)
		for _, r := range decodeLines[docResult](t, out) {
			if !r.succeeded() || r.Reused {
				t.Fatalf("version %d: run --json = %s, want new completed workflows", version, out)
			}
		}
		if a, b := runs(t, dir, "a"), runs(t, dir, "b"); a != wantA || b != wantB {
			t.Fatalf("version %d (edited %q): a ran %d times in all, b %d; want %d and %d", version, edit, a, b, wantA, wantB)
		}
	}
	step("", 6, 3)
	step("b.py", 6, 6)
	step("", 6, 6)
	step("a.py", 12, 6)
}

// A document whose segments repeat one another (a notice page printed
// three times) completes: its identical segments share one cache key,
// which their batch records once.
func TestIdenticalSegmentsShareTheirCacheEntry(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "repeated.md")
	section := "# Notice\n\nThis page is intentionally left blank for the printer.\n\n"
	if err := os.WriteFile(doc, []byte(strings.Repeat(section, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := cli(t, "run", "--home", filepath.Join(dir, "home"), "--json", "--progress", "none", doc)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	res := decodeLines[docResult](t, out)
	if len(res) != 1 || res[0].Status != string(pipeline.WorkflowCompleted) || res[0].Segments != 3 {
		t.Fatalf("results = %+v, want one completed workflow of 3 segments", res)
	}
}
