package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/stagerun"
)

// A segment one stage fails stays failed, whatever a sibling segment
// stage does with it and in whichever order the two finish: the segment,
// the step counts, run --json, show --stage and the outcome event all
// say so.
func TestSiblingStageFailureIsNotOverwritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := filepath.Join(dir, "three.md")
	if err := os.WriteFile(doc, []byte("# One\n\nThe first section talks about apples.\n\n# Two\n\nThe second section talks about pears.\n\n# Three\n\nThe third section talks about plums.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// wordcount fails segment 2 permanently (exit 3, "boom" on stderr).
	wordcount := `  - name: wordcount
    scope: segment
    needs: [segment_builder]
    run: {command: [sh, -c, "req=$(cat); case \"$req\" in *'\"segment\":{\"index\":2,'*) echo boom >&2; exit 3;; esac; echo '{\"words\":1}'"]}
`
	analyzer := `  - name: segment_analyzer
    needs: [segment_builder]
    run: {builtin: segment_analyzer}
`
	tail := `  - name: document_summarizer
    needs: [wordcount, segment_analyzer]
    run: {builtin: document_summarizer}
`
	for i, order := range [][]string{{wordcount, analyzer}, {analyzer, wordcount}} {
		t.Run(fmt.Sprintf("order%d", i), func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			file := filepath.Join(t.TempDir(), "pipeline.yaml")
			name := fmt.Sprintf("siblings%d", i)
			body := "name: " + name + "\nstages:\n" + strings.Join(order, "") + tail
			if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			want(t, 0, []string{name + "@1 (new)"}, "pipeline", "apply", file, "--home", home)
			out, _ := cli(t, "run", "--pipeline", name, "--json", "--progress", "none", "--home", home, doc)
			res := decodeLines[docResult](t, out)
			if len(res) != 1 || res[0].Segments != 3 || res[0].FailedSegments != 1 {
				t.Fatalf("run --json = %+v, want 3 segments, 1 failed", res)
			}
			id := res[0].WorkflowID

			var shown struct {
				Segments []pipeline.Segment `json:"segments"`
			}
			if err := json.Unmarshal([]byte(want(t, 0, nil, "show", "--json", "--home", home, id)), &shown); err != nil {
				t.Fatal(err)
			}
			seg := shown.Segments
			failed := 0
			for _, s := range seg {
				if s.Status == pipeline.SegmentFailed {
					failed++
					if s.Index != 2 || s.Stage != "wordcount" || !strings.Contains(s.Error, "boom") {
						t.Errorf("failed segment = %+v, want segment 2 failed by wordcount with boom", s)
					}
				}
			}
			if failed != 1 {
				t.Errorf("segments = %+v, want exactly segment 2 failed", seg)
			}

			var status struct {
				Progress pipeline.StepProgress `json:"progress"`
			}
			if err := json.Unmarshal([]byte(want(t, 0, nil, "status", "--json", "--home", home, id)), &status); err != nil {
				t.Fatal(err)
			}
			if prog := status.Progress; prog.SegmentsFailed != 1 || prog.SegmentsDone != 2 {
				t.Errorf("step counts done=%d failed=%d, want 2/1", prog.SegmentsDone, prog.SegmentsFailed)
			} else if msg := prog.Steps["wordcount"].Error; !strings.Contains(msg, "1 failed in this stage") || prog.Steps["wordcount"].SegmentsFailed != 1 {
				t.Errorf("wordcount's step says %q, want its failed segment counted", msg)
			} else if msg := prog.Steps["segment_analyzer"].Error; !strings.Contains(msg, "0 failed in this stage") {
				t.Errorf("segment_analyzer's step says %q, want none of the failures its own", msg)
			}

			lines := want(t, 0, nil, "show", "--stage", "wordcount", "--home", home, id)
			if !strings.Contains(lines, `"index":2`) || !strings.Contains(lines, "boom") {
				t.Errorf("show --stage wordcount:\n%s", lines)
			}

			var events []struct {
				Event pipeline.Event `json:"event"`
			}
			if err := json.Unmarshal([]byte(want(t, 0, nil, "events", "--json", "--home", home, id)), &events); err != nil {
				t.Fatal(err)
			}
			if len(events) != 1 || events[0].Event.Type != pipeline.EventCompleted || events[0].Event.Segments.Failed != 1 {
				t.Errorf("events = %+v, want analysis.completed with 1 failed segment", events)
			}
		})
	}
}

// Every user's stage kind, at either scope, gets the project's settings
// and its own settings map in its request.
func TestStageRequestCarriesSettings(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	var mu sync.Mutex
	var posted []stagerun.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req stagerun.Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		posted = append(posted, req)
		mu.Unlock()
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	requests := filepath.Join(dir, "requests")
	if err := os.Mkdir(requests, 0o755); err != nil {
		t.Fatal(err)
	}
	// The command stages save their request under requests/.
	save := `[sh, -c, "cat > $(mktemp -p ` + requests + `); echo '{}'"]`
	body := `name: settled
stages:
  - name: per_segment
    scope: segment
    needs: [segment_builder]
    run: {command: ` + save + `}
    settings: {threshold: 0.8, labels: [name, iban]}
  - name: per_document
    needs: [per_segment]
    run: {command: ` + save + `}
    settings: {mode: strict}
  - name: remote
    needs: [per_document]
    run: {http: "` + srv.URL + `"}
    settings: {endpoint_mode: fast}
`
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, nil, "pipeline", "apply", file, "--home", home)
	want(t, 0, nil, "project", "create", "contracts", "--language", "de", "--prompt", "Supplier contracts", "--home", home)
	want(t, 0, nil, "run", "--project", "contracts", "--pipeline", "settled", "--progress", "none", "--home", home, filepath.Join(docs, "notes.md"))

	var got []stagerun.Request
	entries, err := os.ReadDir(requests)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(requests, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var req stagerun.Request
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got = append(got, req)
	}
	got = append(got, posted...)
	seen := map[string]bool{}
	for _, req := range got {
		seen[req.Stage] = true
		if req.Project.ID != "contracts" || req.Project.DocumentPrompt != "Supplier contracts" || req.Project.Language != "de" || !req.Project.OCR.Enabled {
			t.Errorf("%s: project = %+v", req.Stage, req.Project)
		}
		var wantSettings string
		switch req.Stage {
		case "per_segment":
			wantSettings = `{"labels":["name","iban"],"threshold":0.8}`
		case "per_document":
			wantSettings = `{"mode":"strict"}`
		case "remote":
			wantSettings = `{"endpoint_mode":"fast"}`
		}
		if raw, _ := json.Marshal(req.Settings); string(raw) != wantSettings {
			t.Errorf("%s: settings = %s, want %s", req.Stage, raw, wantSettings)
		}
	}
	if !seen["per_segment"] || !seen["per_document"] || !seen["remote"] {
		t.Fatalf("requests seen from %v, want all three stages", seen)
	}
}

// A command stage in batch mode answers a whole batch from one process:
// its answers land per segment, an error answer fails that segment alone,
// and the process starts once per batch.
func TestBatchModeCommandStage(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	starts := filepath.Join(dir, "starts")
	script := filepath.Join(dir, "count.py")
	if err := os.WriteFile(script, []byte(`import json, sys
open(sys.argv[1], "a").write("start\n")
for line in sys.stdin:
    req = json.loads(line)
    seg = req["segment"]
    if seg["index"] == 2:
        print(json.dumps({"index": seg["index"], "error": "segment two is refused"}), flush=True)
    else:
        print(json.dumps({"index": seg["index"], "words": len(seg["text"].split()), "label": req["settings"]["label"]}), flush=True)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	body := `name: batched
batch_size: 2
stages:
  - name: count
    scope: segment
    needs: [segment_builder]
    run: {command: [python3, ` + script + `, ` + starts + `], batch: true}
    settings: {label: counted}
`
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, nil, "pipeline", "apply", file, "--home", home)
	out, _ := cli(t, "run", "--pipeline", "batched", "--json", "--progress", "none", "--home", home, filepath.Join(docs, "notes.md"))
	res := decodeLines[docResult](t, out)
	if len(res) != 1 || res[0].Segments < 3 || res[0].FailedSegments != 1 {
		t.Fatalf("run --json = %+v, want segment 2 of 3 or more failed", res)
	}
	lines := want(t, 0, nil, "show", "--stage", "count", "--home", home, res[0].WorkflowID)
	if !strings.Contains(lines, `"label":"counted"`) || !strings.Contains(lines, "segment two is refused") {
		t.Errorf("show --stage count:\n%s", lines)
	}
	raw, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	batches := (res[0].Segments + 1) / 2
	if n := strings.Count(string(raw), "start"); n != batches {
		t.Errorf("the stage started %d times for %d batches", n, batches)
	}
}
