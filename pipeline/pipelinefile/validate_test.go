package pipelinefile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// check parses src as p.yaml in dir and validates it for target: the
// problems, one per line, or "".
func check(t *testing.T, dir, src string, target Target) string {
	t.Helper()
	def, err := Parse("p.yaml", []byte(src))
	if err == nil {
		def.Dir = dir
		err = Validate(def, target)
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// head starts every case: name on line 1, stages on line 2, so the first
// stage is on line 3.
const head = "name: t\nstages:\n"

func TestRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notexec.sh"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rule   string
		src    string
		target Target
		want   string
	}{
		{"unknown builtin", `
  - name: a
    run: {builtin: magic}`, TargetEmbedded,
			`p.yaml:4: stage "a": unknown builtin "magic" (want one of segment_prep, format_parser, ocr, segment_builder, segment_analyzer, graph_builder, document_summarizer, bedrock_analyzer, openai_analyzer)`},
		{"ingestion builtin elsewhere", `
  - name: a
    run: {builtin: ocr}`, TargetEmbedded,
			`p.yaml:4: stage "a": builtin "ocr" is an ingestion stage and runs only as the stage of that name`},
		{"builtin at the wrong scope", `
  - name: a
    scope: document
    run: {builtin: segment_analyzer}`, TargetEmbedded,
			`p.yaml:5: stage "a": builtin "segment_analyzer" runs at segment scope`},
		{"unknown stage key", `
  - name: a
    run: {builtin: graph_builder}
    timout: 60s`, TargetEmbedded,
			`p.yaml:5: stage "a": unknown key "timout" (want one of name, label, scope, needs, run, timeout, retry, when, settings, env, cache)`},
		{"unknown top-level key", `
  - name: a
    run: {builtin: graph_builder}
concurrency: 3`, TargetEmbedded,
			`p.yaml:5: unknown key "concurrency" (want one of name, description, batch_size, max_concurrency, stages)`},
		{"unknown nested key", `
  - name: a
    run: {builtin: graph_builder}
    retry: {attempts: 2, jitter: full}`, TargetEmbedded,
			`p.yaml:5: stage "a": unknown key "jitter" (want one of attempts, interval, backoff, max_delay)`},
		{"cycle", `
  - name: a
    needs: [c]
    run: {builtin: graph_builder}
  - name: b
    needs: [a]
    run: {builtin: document_summarizer}
  - name: c
    needs: [b]
    run: {command: [sh, c.sh]}`, TargetEmbedded,
			`p.yaml:4: stage "a": needs form a cycle: a -> c -> b -> a`},
		{"need on itself", `
  - name: a
    needs: [a]
    run: {builtin: graph_builder}`, TargetEmbedded,
			`p.yaml:4: stage "a": needs form a cycle: a -> a`},
		{"need on a missing stage", `
  - name: a
    needs: [segment_analyser]
    run: {builtin: graph_builder}`, TargetEmbedded,
			`p.yaml:4: stage "a": needs "segment_analyser", which is not a stage`},
		{"need inside the ingestion head", `
  - name: a
    needs: [ocr]
    run: {builtin: graph_builder}`, TargetEmbedded,
			`p.yaml:4: stage "a": needs "ocr"; stages after the ingestion head need segment_builder or a later stage`},
		{"ingestion order", `
  - name: ocr
    needs: [segment_prep]`, TargetEmbedded,
			`p.yaml:4: stage "ocr": the ingestion stages run in a fixed order; ocr needs format_parser`},
		{"segment stage after the fan-out", `
  - name: a
    run: {builtin: segment_analyzer}
  - name: g
    needs: [a]
    run: {builtin: graph_builder}
  - name: s
    scope: segment
    needs: [g]
    run: {command: [sh, s.sh]}`, TargetEmbedded,
			`p.yaml:10: stage "s": a segment stage cannot come after document stage "g", which runs after the segment fan-out (it needs segment stage "a")`},
		{"duplicate name", `
  - name: a
    run: {builtin: graph_builder}
  - name: a
    run: {builtin: document_summarizer}`, TargetEmbedded,
			`p.yaml:5: stage "a": defined twice (first at line 3)`},
		{"invalid stage name", `
  - name: Redact-PII
    run: {builtin: graph_builder}`, TargetEmbedded,
			`p.yaml:3: stage "Redact-PII": name must be lowercase letters, digits and '_'`},
		{"invalid pipeline name", `
  - name: a
    run: {builtin: graph_builder}
name: My Pipeline`, TargetEmbedded,
			`p.yaml:5: key "name" repeated (first at line 1)`},
		{"invalid scope", `
  - name: a
    scope: batch
    run: {builtin: graph_builder}`, TargetEmbedded,
			`p.yaml:4: stage "a": scope must be document or segment, got "batch"`},
		{"retry attempts", `
  - name: a
    run: {builtin: graph_builder}
    retry: {attempts: 0}`, TargetEmbedded,
			`p.yaml:5: stage "a": retry attempts must be positive, got 0`},
		{"retry interval", `
  - name: a
    run: {builtin: graph_builder}
    retry:
      interval: 0s`, TargetEmbedded,
			`p.yaml:6: stage "a": retry interval must be positive, got 0s`},
		{"retry backoff", `
  - name: a
    run: {builtin: graph_builder}
    retry:
      backoff: 0.5`, TargetEmbedded,
			`p.yaml:6: stage "a": retry backoff must be at least 1.0, got 0.5`},
		{"timeout", `
  - name: a
    run: {builtin: graph_builder}
    timeout: -5s`, TargetEmbedded,
			`p.yaml:5: stage "a": timeout must be positive, got -5s`},
		{"timeout without a unit", `
  - name: a
    run: {builtin: graph_builder}
    timeout: 60`, TargetEmbedded,
			`p.yaml:5: stage "a": want a duration such as 60s, got "60"`},
		{"no run", `
  - name: a
    label: Nothing to do`, TargetEmbedded,
			`p.yaml:3: stage "a": run must set one of builtin, command, http, lambda, review`},
		{"two runs", `
  - name: a
    run: {builtin: graph_builder, http: "http://127.0.0.1:8089/x"}`, TargetEmbedded,
			`p.yaml:4: stage "a": run sets builtin and http; set exactly one`},
		{"lambda on the embedded engine", `
  - name: a
    run: {lambda: "arn:aws:lambda:eu-west-1:123456789012:function:enrich"}`, TargetEmbedded,
			`p.yaml:4: stage "a": lambda runs only on the AWS target, not the embedded engine`},
		{"lambda on AWS", `
  - name: a
    run: {lambda: "arn:aws:lambda:eu-west-1:123456789012:function:enrich"}`, TargetAWS, ``},
		{"lambda that is not an ARN", `
  - name: a
    run: {lambda: enrich}`, TargetAWS,
			`p.yaml:4: stage "a": lambda must be a Lambda function ARN, got "enrich"`},
		{"command path missing", `
  - name: a
    run: {command: [./missing.sh]}`, TargetEmbedded,
			`p.yaml:4: stage "a": command "./missing.sh" is not found (looked at ` + filepath.Join(dir, "missing.sh") + `)`},
		{"command path not executable", `
  - name: a
    run: {command: [./notexec.sh]}`, TargetAWS,
			`p.yaml:4: stage "a": command "./notexec.sh" is not executable`},
		{"command not on PATH", `
  - name: a
    run: {command: [no-such-program-docpipe]}`, TargetEmbedded,
			`p.yaml:4: stage "a": command "no-such-program-docpipe" is not found on PATH`},
		{"command on AWS is looked up by the workers", `
  - name: a
    run: {command: [no-such-program-docpipe]}`, TargetAWS, ``},
		{"empty command", `
  - name: a
    run: {command: []}`, TargetEmbedded,
			`p.yaml:4: stage "a": command is empty`},
		{"when before format_parser", `
  - name: format_parser
    when: {format: [pdf]}`, TargetEmbedded,
			`p.yaml:4: stage "format_parser": when matches what format_parser finds out, but this stage does not come after format_parser`},
		{"when with unknown values", `
  - name: a
    run: {builtin: graph_builder}
    when: {format: [pdf, xlsx], language: [english], pages: {min: 10, max: 2}}`, TargetEmbedded,
			"p.yaml:5: stage \"a\": unknown format \"xlsx\" (want one of pdf, docx, html, markdown, text, png, jpeg, tiff, warc, wav, mp3, flac, ogg, image, audio)\n" +
				"p.yaml:5: stage \"a\": language \"english\" is not an ISO 639-1 code such as en\n" +
				`p.yaml:5: stage "a": pages min 10 is more than max 2`},
		{"http scheme", `
  - name: a
    run: {http: "ftp://127.0.0.1/enrich"}`, TargetEmbedded,
			`p.yaml:4: stage "a": http must be an http:// or https:// URL, got "ftp://127.0.0.1/enrich"`},
		{"segment_builder stays builtin", `
  - name: segment_builder
    run: {command: [sh, build.sh]}`, TargetEmbedded,
			`p.yaml:4: stage "segment_builder": segment_builder writes the segments and the manifest and must stay builtin`},
		{"wrong type", `
  - name: a
    run: {builtin: graph_builder}
    needs: segment_builder`, TargetEmbedded,
			`p.yaml:5: stage "a": want a list such as [a, b], got "segment_builder"`},
		{"batch at document scope", `
  - name: a
    run:
      command: [sh, a.sh]
      batch: true`, TargetEmbedded,
			`p.yaml:6: stage "a": batch runs one process for a batch of segments; this stage runs at document scope, set scope: segment`},
		{"batch for a service", `
  - name: a
    scope: segment
    run: {http: "http://127.0.0.1:8089/x", batch: true}`, TargetEmbedded,
			`p.yaml:5: stage "a": batch is for command stages`},
		{"batch not a switch", `
  - name: a
    scope: segment
    run: {command: [sh, a.sh], batch: yes please}`, TargetEmbedded,
			`p.yaml:5: stage "a": want true or false, got "yes please"`},
		{"batch segment command", `
  - name: a
    scope: segment
    run: {command: [sh, a.sh], batch: true}
    env: [OPENAI_API_KEY, _X1]`, TargetEmbedded, ``},
		{"env names", `
  - name: a
    run: {command: [sh, a.sh]}
    env: [API_KEY, API-KEY, API_KEY]`, TargetEmbedded,
			"p.yaml:5: stage \"a\": env \"API-KEY\" is not a variable name (letters, digits and '_', not starting with a digit)\n" +
				`p.yaml:5: stage "a": env names "API_KEY" twice`},
		{"env for a builtin", `
  - name: a
    run: {builtin: graph_builder}
    env: [API_KEY]`, TargetEmbedded,
			`p.yaml:5: stage "a": env is for command stages, which run here with a minimal environment`},
		{"syntax", `
  - name: a
    run: "graph_builder`, TargetEmbedded,
			`p.yaml:4: found unexpected end of stream`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			if got := check(t, dir, head+strings.TrimPrefix(tc.src, "\n"), tc.target); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestAllProblems: every problem is reported at once, in line order.
func TestAllProblems(t *testing.T) {
	t.Parallel()
	src := `name: Contracts
batch_size: 0
stages:
  - name: a
    needs: [missing]
    run: {builtin: graph_builder}
    timeout: 0s
  - name: b
    run: {lambda: "arn:aws:lambda:eu-west-1:123456789012:function:f"}
`
	want := strings.Join([]string{
		`p.yaml:1: name "Contracts" must be lowercase letters, digits and '-'`,
		`p.yaml:2: batch_size must be positive, got 0`,
		`p.yaml:5: stage "a": needs "missing", which is not a stage`,
		`p.yaml:7: stage "a": timeout must be positive, got 0s`,
		`p.yaml:9: stage "b": lambda runs only on the AWS target, not the embedded engine`,
	}, "\n")
	if got := check(t, t.TempDir(), src, TargetEmbedded); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestImpliedHead: a file lists what comes after segment_builder; the
// ingestion head is the default's unless a stage of that name replaces it.
func TestImpliedHead(t *testing.T) {
	t.Parallel()
	def, err := Parse("p.yaml", []byte(head+`
  - name: ocr
    run: {command: [sh, ocr.sh]}
    timeout: 30s
  - name: summary
    run: {builtin: document_summarizer}
  - name: analysis
    run: {builtin: segment_analyzer}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(def, TargetEmbedded); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range def.Stages {
		names = append(names, st.Name)
	}
	if got := strings.Join(names, " "); got != "segment_prep format_parser ocr segment_builder summary analysis" {
		t.Errorf("stages = %s", got)
	}
	ocr, _ := def.Stage(pipeline.StepOCR)
	if ocr.Run.Command[0] != "sh" || ocr.TimeoutSeconds != 30 || ocr.Label != "OCR image pages" || ocr.Needs[0] != pipeline.StepFormatParser {
		t.Errorf("declared ocr = %+v", ocr)
	}
	prep, _ := def.Stage(pipeline.StepSegmentPrep)
	if prep.TimeoutSeconds != 300 {
		t.Errorf("implied segment_prep = %+v", prep)
	}
	summary, _ := def.Stage("summary")
	analysis, _ := def.Stage("analysis")
	if summary.Needs[0] != pipeline.StepSegmentBuilder || summary.Label != "Summarize document" || summary.TimeoutSeconds != DefaultTimeoutSeconds {
		t.Errorf("summary = %+v", summary)
	}
	if analysis.Scope != pipeline.ScopeSegment {
		t.Errorf("a segment_analyzer stage without a scope has scope %q", analysis.Scope)
	}
}

// TestBatchAndEnvRoundTrip: batch and env survive Format and Parse, and
// a definition without them keeps its content hash.
func TestBatchAndEnvRoundTrip(t *testing.T) {
	t.Parallel()
	src := head + `
  - name: words
    scope: segment
    run: {command: [python3, words.py], batch: true}
    env: [OPENAI_API_KEY]
  - name: plain
    run: {command: [sh, plain.sh]}
`
	def, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	words, _ := def.Stage("words")
	if !words.Run.Batch || len(words.Env) != 1 || words.Env[0] != "OPENAI_API_KEY" {
		t.Fatalf("words = %+v", words)
	}
	out := Format(def)
	for _, want := range []string{"command: [python3, words.py]\n      batch: true\n", "env: [OPENAI_API_KEY]\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("formatted file lacks %q:\n%s", want, out)
		}
	}
	again, err := Parse("again.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if again.ContentHash() != def.ContentHash() {
		t.Errorf("round trip changed the definition:\n%s", out)
	}
	plain, _ := def.Stage("plain")
	stored, _ := json.Marshal(plain)
	if strings.Contains(string(stored), "batch") || strings.Contains(string(stored), "env") {
		t.Errorf("a stage without batch or env stores %s", stored)
	}
}

func TestCacheOffRoundTrip(t *testing.T) {
	t.Parallel()
	src := head + `
  - name: notify
    run: {command: [sh, notify.sh]}
    cache: false
  - name: plain
    run: {command: [sh, plain.sh]}
`
	def, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	notify, _ := def.Stage("notify")
	plain, _ := def.Stage("plain")
	if !notify.NoCache || plain.NoCache {
		t.Fatalf("notify.NoCache = %v, plain.NoCache = %v", notify.NoCache, plain.NoCache)
	}
	out := Format(def)
	if strings.Count(string(out), "cache: false") != 1 {
		t.Errorf("formatted file should say cache: false once:\n%s", out)
	}
	again, err := Parse("again.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if again.ContentHash() != def.ContentHash() {
		t.Errorf("round trip changed the definition:\n%s", out)
	}
	if stored, _ := json.Marshal(plain); strings.Contains(string(stored), "cache") {
		t.Errorf("a cached stage stores %s: stored versions would change", stored)
	}
	if got := check(t, t.TempDir(), head+"  - name: x\n    run: {command: [sh, x.sh]}\n    cache: no-thanks\n", TargetEmbedded); !strings.Contains(got, "want true or false") {
		t.Errorf("cache: no-thanks gave %q", got)
	}
}
