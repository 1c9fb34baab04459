package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
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
			} else if msg := prog.Steps["wordcount"].Error; !strings.Contains(msg, "1 failed") {
				t.Errorf("wordcount's step says %q, want its failed segment counted", msg)
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
