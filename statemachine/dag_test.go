package statemachine

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/asl"
)

func generateParsed(t *testing.T, def pipeline.Definition, mode Mode) *asl.StateMachine {
	t.Helper()
	raw, err := Generate(def, mode)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := asl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

func parsePipeline(t *testing.T, yaml string) pipeline.Definition {
	t.Helper()
	def, err := pipelinefile.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// Every sample pipeline generates, in every mode, a definition the strict
// validator accepts (Generate validates what it writes).
func TestSamplePipelinesGenerate(t *testing.T) {
	files, err := filepath.Glob("../samples/pipelines/*/pipeline.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("sample pipelines: %v %v", files, err)
	}
	for _, f := range files {
		def, err := pipelinefile.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range Modes {
			if _, err := Generate(def, mode); err != nil {
				t.Errorf("%s, %s mode: %v", f, mode, err)
			}
		}
	}
}

// Two stages that need the same stage and not each other run as branches of
// one Parallel, and the stage needing both runs after it (fan-in).
func TestIndependentStagesRunInParallel(t *testing.T) {
	def := parsePipeline(t, `
name: dag
stages:
  - {name: segment_analyzer, run: {builtin: segment_analyzer}}
  - {name: graph_builder, needs: [segment_analyzer], run: {builtin: graph_builder}}
  - {name: enrich, needs: [segment_analyzer], run: {http: "http://127.0.0.1:1/x"}}
  - {name: document_summarizer, needs: [graph_builder, enrich], run: {builtin: document_summarizer}}
`)
	sm := generateParsed(t, def, ModeLocal)
	var par *asl.Parallel
	var parName string
	for _, name := range sm.States.Names {
		if p, ok := sm.States.ByName[name].(*asl.Parallel); ok {
			par, parName = p, name
		}
	}
	if par == nil {
		t.Fatalf("no Parallel state in %v", sm.States.Names)
	}
	var branches []string
	for _, b := range par.Branches {
		branches = append(branches, b.StartAt)
		if task, ok := b.States.ByName[b.StartAt].(*asl.Task); !ok || len(task.Catch) != 0 {
			t.Errorf("branch %s: want a Task without its own Catch (the Parallel catches)", b.StartAt)
		}
	}
	slices.Sort(branches)
	if !slices.Equal(branches, []string{"enrich", "graph_builder"}) {
		t.Errorf("branches = %v", branches)
	}
	if par.Next != pipeline.StepDocumentSummarizer || len(par.Catch) == 0 {
		t.Errorf("Parallel %q: Next %q, Catch %v", parName, par.Next, par.Catch)
	}
	if sm.States.ByName[StateSegmentBatches].(*asl.Map).Next != parName {
		t.Errorf("the fan-out does not continue into the Parallel")
	}
	// The HTTP stage is dispatched to the generic handler.
	enrich := par.Branches[slices.Index(branches, "enrich")]
	if _, ok := enrich.States.ByName["enrich"]; !ok {
		enrich = par.Branches[1-slices.Index(branches, "enrich")]
	}
	b, _ := json.Marshal(enrich.States.ByName["enrich"])
	if !strings.Contains(string(b), `"handler":"`+pipeline.HandlerHTTP+`"`) {
		t.Errorf("enrich task payload lacks its handler: %s", b)
	}
}

// Segment stages that follow each other run in the same batch, in order.
func TestSegmentStagesShareTheBatch(t *testing.T) {
	def, err := pipelinefile.Load("../samples/pipelines/redact/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sm := generateParsed(t, def, ModeQueue)
	m := sm.States.ByName[StateSegmentBatches].(*asl.Map)
	child := m.ItemProcessor.Machine
	if child.StartAt != "redact" || !slices.Equal(child.States.Names, []string{"redact", pipeline.StepSegmentAnalyzer}) {
		t.Fatalf("batch runs %v from %s", child.States.Names, child.StartAt)
	}
	redact := child.States.ByName["redact"].(*asl.Task)
	if redact.Next != pipeline.StepSegmentAnalyzer {
		t.Errorf("redact does not continue to the analyzer")
	}
	// Only the batch's last state drops its output; earlier ones hand the
	// batch on.
	if redact.OutputPath.Set || !child.States.ByName[pipeline.StepSegmentAnalyzer].(*asl.Task).OutputPath.Null {
		t.Errorf("OutputPath: redact %+v, analyzer %+v", redact.OutputPath, child.States.ByName[pipeline.StepSegmentAnalyzer].(*asl.Task).OutputPath)
	}
}

// A format group compiles to exactly the formats the runtime matches.
func TestWhenChoiceNamesEveryFormatOfAGroup(t *testing.T) {
	for _, group := range pipeline.FormatGroups() {
		def := parsePipeline(t, `
name: when
stages:
  - {name: segment_analyzer, run: {builtin: segment_analyzer}}
  - name: grouped
    needs: [segment_analyzer]
    run: {builtin: graph_builder}
    when: {format: [`+group+`]}
`)
		sm := generateParsed(t, def, ModeLocal)
		choice := sm.States.ByName[whenStateName("grouped")].(*asl.Choice)
		var got []string
		rules := choice.Choices[0].Or
		if rules == nil {
			rules = []*asl.ChoiceRule{choice.Choices[0]}
		}
		for _, r := range rules {
			got = append(got, r.Value.(string))
		}
		want, _ := pipeline.FormatGroup(group)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("when [%s] compiles to %v, want %v", group, got, want)
		}
	}
}

// A `when` compiles to a Choice on the attributes format_parser keeps at
// $.doc; the default branch records the stage as skipped.
func TestWhenCompilesToAChoice(t *testing.T) {
	def := parsePipeline(t, `
name: when
stages:
  - {name: segment_analyzer, run: {builtin: segment_analyzer}}
  - name: pdf_only
    needs: [segment_analyzer]
    run: {builtin: graph_builder}
    when: {format: [pdf, image], pages: {min: 2}}
`)
	for _, mode := range Modes {
		sm := generateParsed(t, def, mode)
		choice, ok := sm.States.ByName[whenStateName("pdf_only")].(*asl.Choice)
		if !ok {
			t.Fatalf("%s: no Choice in %v", mode, sm.States.Names)
		}
		rule, _ := json.Marshal(choice.Choices[0])
		for _, want := range []string{`"$.doc.format"`, `"pdf"`, `"png"`, `"jpeg"`, `"tiff"`, `"NumericGreaterThanEquals":2`, `"Next":"pdf_only"`} {
			if !strings.Contains(string(rule), want) {
				t.Errorf("%s: rule %s lacks %s", mode, rule, want)
			}
		}
		if choice.Default != skipStateName("pdf_only") {
			t.Errorf("%s: Default = %q", mode, choice.Default)
		}
		skip, _ := json.Marshal(sm.States.ByName[skipStateName("pdf_only")])
		if !strings.Contains(string(skip), `"skip":true`) || !strings.Contains(string(skip), `"handler":"graph_builder"`) {
			t.Errorf("%s: skip task %s", mode, skip)
		}
		fp := sm.States.ByName[pipeline.StepFormatParser].(*asl.Task)
		if fp.ResultPath.Null || fp.ResultPath.Path.Raw != "$.doc" || fp.ResultSelector == nil {
			t.Errorf("%s: format_parser does not keep the document's attributes: %+v", mode, fp.ResultPath)
		}
	}
}
