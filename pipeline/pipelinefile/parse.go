// Package pipelinefile reads pipeline definitions that users write as files
// (YAML, or JSON, which is YAML) into pipeline.Definition, checks them
// against the target they will run on, and holds docpipe's built-in
// pipeline as the embedded file default.yaml.
//
// A file lists the stages that come after the ingestion head. The head —
// segment_prep, format_parser, ocr, segment_builder — creates the segments
// and the manifest, so it is part of every pipeline in that fixed order:
// each of its stages is implied with its built-in settings unless the file
// declares a stage of that name, whose settings (a command replacing ocr, a
// longer timeout) are then used. segment_builder must stay builtin. A stage
// without needs runs after segment_builder.
//
// Files are read as a go.yaml.in/yaml/v3 node tree, which keeps every
// key's line: each problem names file:line, and walking the tree reports
// every unknown key rather than the first.
package pipelinefile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/docpipe/docpipe/pipeline"
)

// What a file may leave out.
const (
	DefaultTimeoutSeconds = 900
	DefaultBatchSize      = 100
	DefaultMaxConcurrency = 8
)

// Load reads the pipeline file at path; Definition.Dir is its folder.
// Problems with the file's shape (syntax, unknown keys, wrong types) are
// returned together as Problems; Validate checks the rest against a target.
func Load(path string) (pipeline.Definition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return pipeline.Definition{}, err
	}
	def, err := Parse(path, data)
	dir, absErr := filepath.Abs(filepath.Dir(path))
	if absErr != nil {
		return def, absErr
	}
	def.Dir = dir
	return def, err
}

// Parse reads a pipeline file's content; name is how messages call it.
func Parse(name string, data []byte) (pipeline.Definition, error) {
	base, err := parsedDefault()
	if err != nil {
		return pipeline.Definition{}, err
	}
	return parse(name, data, &base)
}

// parse decodes data. base (the default pipeline) gives the ingestion
// stages a file may leave out and the labels of builtins; with no base (the
// default file itself) nothing is implied.
func parse(name string, data []byte, base *pipeline.Definition) (pipeline.Definition, error) {
	d := &decoder{file: name, base: base}
	head := ingestionHead(base)
	def := pipeline.Definition{BatchSize: DefaultBatchSize, MaxConcurrency: DefaultMaxConcurrency}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		d.syntax(err)
		return def, d.problems.err()
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		d.add(0, "", "the file is empty")
		return def, d.problems.err()
	}
	top := root.Content[0]
	var declared []declaredStage
	lines := map[string]int{}
	d.mapping(top, "", "name, description, batch_size, max_concurrency, stages", func(key string, line int, v *yaml.Node) bool {
		lines[key] = line
		switch key {
		case "name":
			def.Name = d.str(v, "")
		case "description":
			def.Description = d.str(v, "")
		case "batch_size":
			def.BatchSize = d.int(v, "")
		case "max_concurrency":
			def.MaxConcurrency = d.int(v, "")
		case "stages":
			if v.Kind != yaml.SequenceNode {
				d.add(v.Line, "", "stages must be a list")
				return true
			}
			for _, n := range v.Content {
				if s, ok := d.stage(n, head); ok {
					declared = append(declared, s)
				}
			}
		default:
			return false
		}
		return true
	})
	place := func(s declaredStage) {
		i := len(def.Stages)
		def.Stages = append(def.Stages, s.stage)
		lines["stages."+strconv.Itoa(i)] = s.line
		for f, l := range s.lines {
			lines["stages."+strconv.Itoa(i)+"."+f] = l
		}
	}
	// The ingestion head goes first, in its fixed order, then the rest as
	// written.
	placed := make([]bool, len(declared))
	for _, name := range pipeline.IngestionStages {
		i := slices.IndexFunc(declared, func(s declaredStage) bool { return s.stage.Name == name })
		switch {
		case i >= 0:
			place(declared[i])
			placed[i] = true
		case head != nil:
			def.Stages = append(def.Stages, head[name])
		}
	}
	for i, s := range declared {
		if !placed[i] {
			place(s)
		}
	}
	def.Source = &pipeline.Source{File: name, Lines: lines}
	return def, d.problems.err()
}

// declaredStage is a stage as the file wrote it, with the lines of its
// fields ("timeout", "retry.attempts", ...).
type declaredStage struct {
	stage pipeline.Stage
	line  int
	lines map[string]int
}

var stageKeys = "name, label, scope, needs, run, timeout, retry, when, settings, env, cache"

func (d *decoder) stage(n *yaml.Node, head map[string]pipeline.Stage) (declaredStage, bool) {
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, "", "a stage must be a mapping with at least a name")
		return declaredStage{}, false
	}
	name := ""
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "name" {
			name = d.str(n.Content[i+1], "")
		}
	}
	if name == "" {
		d.add(n.Line, "", "a stage has no name")
		return declaredStage{}, false
	}
	ds := declaredStage{line: n.Line, lines: map[string]int{}}
	st, isHead := head[name]
	if isHead {
		st = clone(st)
	} else {
		st = pipeline.Stage{
			Name: name, Scope: pipeline.ScopeDocument, Retryable: true,
			Retry: pipeline.DefaultRetry, TimeoutSeconds: DefaultTimeoutSeconds,
		}
	}
	labelSet, needsSet, scopeSet := false, false, false
	d.mapping(n, name, stageKeys, func(key string, line int, v *yaml.Node) bool {
		ds.lines[key] = line
		switch key {
		case "name":
		case "label":
			st.Label, labelSet = d.str(v, name), true
		case "scope":
			st.Scope, scopeSet = pipeline.Scope(d.str(v, name)), true
		case "needs":
			st.Needs, needsSet = d.strs(v, name), true
		case "run":
			st.Run = d.run(v, name, ds.lines)
		case "timeout":
			st.TimeoutSeconds = d.seconds(v, name)
		case "retry":
			d.retry(v, name, &st.Retry, ds.lines)
		case "when":
			st.When = d.when(v, name)
		case "settings":
			st.Settings = d.settings(v, name, ds.lines)
		case "env":
			st.Env = d.strs(v, name)
		case "cache":
			st.NoCache = !d.bool(v, name)
		default:
			return false
		}
		return true
	})
	if !labelSet && !isHead {
		st.Label = d.builtinLabel(st.Run.Builtin, name)
	}
	if !scopeSet && !isHead && st.Run.Builtin != "" {
		st.Scope = builtinScope(st.Run.Builtin)
	}
	switch {
	case slices.Contains(pipeline.IngestionStages, name) && !needsSet:
		st.Needs = ingestionNeeds(name)
	case !slices.Contains(pipeline.IngestionStages, name) && len(st.Needs) == 0:
		st.Needs = []string{pipeline.StepSegmentBuilder}
	}
	ds.stage = st
	return ds, true
}

// settings reads a stage's settings as plain data, recording each key's
// line as "settings.KEY"; what the keys mean, the builtin checks.
func (d *decoder) settings(n *yaml.Node, stage string, lines map[string]int) map[string]any {
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, stage, "settings must be a mapping, got %s", kind(n))
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		lines["settings."+n.Content[i].Value] = n.Content[i].Line
	}
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		d.add(n.Line, stage, "settings: %v", err)
	}
	return m
}

// run reads a stage's run, recording the line of its batch switch as
// "run.batch".
func (d *decoder) run(n *yaml.Node, stage string, lines map[string]int) pipeline.RunSpec {
	var r pipeline.RunSpec
	// A review's due date and outcomes sit beside review:, as run keys
	// that only a review stage may set.
	var rv pipeline.ReviewSpec
	reviewLine := 0
	d.mapping(n, stage, "builtin, command, batch, http, headers, lambda, review, due, hard_limit, on_timeout, on_reject", func(key string, line int, v *yaml.Node) bool {
		switch key {
		case "builtin":
			r.Builtin = d.str(v, stage)
		case "command":
			r.Command = d.strs(v, stage)
			if len(r.Command) == 0 && v.Kind == yaml.SequenceNode {
				d.add(v.Line, stage, "command is empty")
			}
		case "batch":
			r.Batch = d.bool(v, stage)
			lines["run.batch"] = line
		case "http":
			r.HTTP = d.str(v, stage)
		case "headers":
			r.Headers = d.headers(v, stage)
		case "lambda":
			r.Lambda = d.str(v, stage)
		case "review":
			d.review(v, stage, &rv)
			r.Review = &rv
		case "due":
			rv.DueSeconds = d.seconds(v, stage)
		case "hard_limit":
			rv.HardLimitSeconds = d.seconds(v, stage)
		case "on_timeout":
			rv.OnTimeout = d.str(v, stage)
		case "on_reject":
			rv.OnReject = d.str(v, stage)
		default:
			return false
		}
		if key == "due" || key == "hard_limit" || key == "on_timeout" || key == "on_reject" {
			reviewLine = line
		}
		return true
	})
	if r.Review == nil && reviewLine > 0 {
		d.add(reviewLine, stage, "due, hard_limit, on_timeout and on_reject belong to a review stage; run sets no review")
	}
	return r
}

// headers reads {Name: {env: VARIABLE}, ...}.
func (d *decoder) headers(n *yaml.Node, stage string) map[string]pipeline.HeaderValue {
	hs := map[string]pipeline.HeaderValue{}
	d.mapping(n, stage, "header names", func(name string, _ int, v *yaml.Node) bool {
		var h pipeline.HeaderValue
		d.mapping(v, stage, "env", func(key string, _ int, v *yaml.Node) bool {
			if key != "env" {
				return false
			}
			h.Env = d.str(v, stage)
			return true
		})
		hs[name] = h
		return true
	})
	return hs
}

func (d *decoder) review(n *yaml.Node, stage string, rv *pipeline.ReviewSpec) {
	d.mapping(n, stage, "assign, group", func(key string, _ int, v *yaml.Node) bool {
		switch key {
		case "assign":
			rv.Assign = d.strs(v, stage)
		case "group":
			rv.Group = d.str(v, stage)
		default:
			return false
		}
		return true
	})
}

func (d *decoder) retry(n *yaml.Node, stage string, r *pipeline.RetryPolicy, lines map[string]int) {
	d.mapping(n, stage, "attempts, interval, backoff, max_delay", func(key string, line int, v *yaml.Node) bool {
		lines["retry."+key] = line
		switch key {
		case "attempts":
			r.MaxAttempts = d.int(v, stage)
		case "interval":
			r.IntervalSeconds = d.seconds(v, stage)
		case "backoff":
			r.BackoffRate = d.float(v, stage)
		case "max_delay":
			r.MaxDelaySeconds = d.seconds(v, stage)
		default:
			return false
		}
		return true
	})
}

func (d *decoder) when(n *yaml.Node, stage string) *pipeline.When {
	w := &pipeline.When{}
	d.mapping(n, stage, "format, language, pages", func(key string, _ int, v *yaml.Node) bool {
		switch key {
		case "format":
			w.Format = d.strs(v, stage)
		case "language":
			w.Language = d.strs(v, stage)
		case "pages":
			w.Pages = &pipeline.PageRange{}
			d.mapping(v, stage, "min, max", func(key string, _ int, v *yaml.Node) bool {
				switch key {
				case "min":
					w.Pages.Min = d.int(v, stage)
				case "max":
					w.Pages.Max = d.int(v, stage)
				default:
					return false
				}
				return true
			})
		default:
			return false
		}
		return true
	})
	return w
}

// decoder walks the YAML node tree, collecting every problem.
type decoder struct {
	file     string
	problems Problems
	base     *pipeline.Definition
}

func (d *decoder) add(line int, stage, format string, args ...any) {
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Stage: stage, Msg: fmt.Sprintf(format, args...)})
}

// syntaxLine is compiled on first use, not at start-up.
var syntaxLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// syntax reports a YAML syntax error at its line.
func (d *decoder) syntax(err error) {
	for _, msg := range strings.Split(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n"), "\n") {
		msg = strings.TrimSpace(msg)
		if m := syntaxLine().FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			d.add(line, "", "%s", m[2])
			continue
		}
		d.add(0, "", "%s", strings.TrimPrefix(msg, "yaml: "))
	}
}

// mapping calls field for each key of n in order; field returns false for
// a key it does not know. Unknown, repeated and non-string keys are
// problems.
func (d *decoder) mapping(n *yaml.Node, stage, known string, field func(key string, line int, v *yaml.Node) bool) {
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, stage, "want a mapping with keys %s, got %s", known, kind(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.add(k.Line, stage, "a key must be a plain name, got %s", kind(k))
			continue
		}
		if first, ok := seen[k.Value]; ok {
			d.add(k.Line, stage, "key %q repeated (first at line %d)", k.Value, first)
			continue
		}
		seen[k.Value] = k.Line
		if v.Kind == yaml.AliasNode {
			d.add(v.Line, stage, "aliases are not supported")
			continue
		}
		if !field(k.Value, k.Line, v) {
			d.add(k.Line, stage, "unknown key %q (want one of %s)", k.Value, known)
		}
	}
}

func (d *decoder) str(n *yaml.Node, stage string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.add(n.Line, stage, "want a string, got %s", kind(n))
		return ""
	}
	return n.Value
}

func (d *decoder) strs(n *yaml.Node, stage string) []string {
	if n.Kind != yaml.SequenceNode {
		d.add(n.Line, stage, "want a list such as [a, b], got %s", kind(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		if s := d.str(c, stage); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (d *decoder) bool(n *yaml.Node, stage string) bool {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		d.add(n.Line, stage, "want true or false, got %s", kind(n))
	}
	return v
}

func (d *decoder) int(n *yaml.Node, stage string) int {
	var v int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		d.add(n.Line, stage, "want a whole number, got %s", kind(n))
	}
	return v
}

func (d *decoder) float(n *yaml.Node, stage string) float64 {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil {
		d.add(n.Line, stage, "want a number, got %s", kind(n))
	}
	return v
}

// seconds reads a duration such as 60s or 2m into whole seconds.
func (d *decoder) seconds(n *yaml.Node, stage string) int {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.add(n.Line, stage, "want a duration such as 60s, got %s", kind(n))
		return 0
	}
	dur, err := time.ParseDuration(n.Value)
	switch {
	case err != nil:
		d.add(n.Line, stage, "want a duration such as 60s, got %q", n.Value)
	case dur%time.Second != 0:
		d.add(n.Line, stage, "duration %s is not a whole number of seconds", n.Value)
	case dur > 365*24*time.Hour || dur < -365*24*time.Hour:
		d.add(n.Line, stage, "duration %s is longer than a year", n.Value)
	default:
		return int(dur / time.Second)
	}
	return 0
}

// kind describes a node for messages.
func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "a document"
}
