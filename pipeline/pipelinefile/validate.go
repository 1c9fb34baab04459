package pipelinefile

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/net/http/httpguts"

	"github.com/docpipe/docpipe/internal/redact"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/childenv"
)

// Target is where a pipeline will run; some stages are possible only on one.
type Target string

const (
	// TargetEmbedded is the in-process engine on one machine: commands run
	// here, so their programs must exist here; there is no Lambda.
	TargetEmbedded Target = "embedded"
	// TargetAWS is Step Functions with worker fleets or Lambda. Commands
	// run on the workers, so bare program names are not looked up on this
	// machine; programs given as paths must still be in the pipeline's
	// folder, which ships with it.
	TargetAWS Target = "aws"
)

// namePatterns are the forms of the names a pipeline file gives. They are
// compiled when a first file is validated, not at start-up.
type namePatterns struct {
	pipeline, stage, language *regexp.Regexp
	env                       *regexp.Regexp // a portable environment variable name
	reviewer                  *regexp.Regexp
}

var nameForms = sync.OnceValue(func() *namePatterns {
	return &namePatterns{
		pipeline: regexp.MustCompile(`^[a-z0-9-]+$`),
		stage:    regexp.MustCompile(`^[a-z0-9_]+$`),
		language: regexp.MustCompile(`^[a-z]{2}$`),
		env:      regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`),
		reviewer: regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_@+-]*$`),
	}
})

// Validate checks def for target and returns every problem as Problems,
// each at its file and line when def was read from a file.
func Validate(def pipeline.Definition, target Target) error {
	v := &validator{def: def, target: target}
	if target != TargetEmbedded && target != TargetAWS {
		v.add("", "", "unknown target %q", target)
	}
	v.definition()
	first := map[string]int{}
	for i, st := range def.Stages {
		if at, dup := first[st.Name]; dup {
			v.at(i, "name", "defined twice (first at line %d)", v.line(at, ""))
			continue
		}
		first[st.Name] = i
		v.stage(i, st)
	}
	v.cycles()
	v.fanOut()
	return v.problems.err()
}

type validator struct {
	def      pipeline.Definition
	target   Target
	problems Problems
}

// line is where part of the stage at index i was written: the field, else
// the stage, else 0.
func (v *validator) line(i int, field string) int {
	if v.def.Source == nil {
		return 0
	}
	key := "stages." + strconv.Itoa(i)
	if l, ok := v.def.Source.Lines[key+"."+field]; ok && field != "" {
		return l
	}
	return v.def.Source.Lines[key]
}

func (v *validator) file() string {
	if v.def.Source == nil {
		return ""
	}
	return v.def.Source.File
}

// add records a problem with the file as a whole at the line of key.
func (v *validator) add(key, stage, format string, args ...any) {
	line := 0
	if v.def.Source != nil && key != "" {
		line = v.def.Source.Lines[key]
	}
	v.problems = append(v.problems, Problem{File: v.file(), Line: line, Stage: stage, Msg: fmt.Sprintf(format, args...)})
}

// at records a problem with the stage at index i, at the line of field.
func (v *validator) at(i int, field, format string, args ...any) {
	v.problems = append(v.problems, Problem{File: v.file(), Line: v.line(i, field), Stage: v.def.Stages[i].Name, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) definition() {
	d := v.def
	switch {
	case d.Name == "":
		v.add("", "", "name is missing")
	case !nameForms().pipeline.MatchString(d.Name):
		v.add("name", "", "name %q must be lowercase letters, digits and '-'", d.Name)
	}
	if d.BatchSize <= 0 {
		v.add("batch_size", "", "batch_size must be positive, got %d", d.BatchSize)
	}
	if d.MaxConcurrency <= 0 {
		v.add("max_concurrency", "", "max_concurrency must be positive, got %d", d.MaxConcurrency)
	}
	for _, name := range pipeline.IngestionStages {
		if _, ok := d.Stage(name); !ok {
			v.add("stages", "", "the ingestion stage %q is missing", name)
		}
	}
}

func (v *validator) stage(i int, st pipeline.Stage) {
	if !nameForms().stage.MatchString(st.Name) {
		v.at(i, "name", "name must be lowercase letters, digits and '_'")
	}
	if st.Scope != pipeline.ScopeDocument && st.Scope != pipeline.ScopeSegment {
		v.at(i, "scope", "scope must be document or segment, got %q", st.Scope)
	}
	v.run(i, st)
	v.command(i, st)
	v.needs(i, st)
	v.ingestion(i, st)
	if st.TimeoutSeconds <= 0 {
		v.at(i, "timeout", "timeout must be positive, got %ds", st.TimeoutSeconds)
	}
	r := st.Retry
	if r.MaxAttempts <= 0 {
		v.at(i, "retry.attempts", "retry attempts must be positive, got %d", r.MaxAttempts)
	}
	if r.IntervalSeconds <= 0 {
		v.at(i, "retry.interval", "retry interval must be positive, got %ds", r.IntervalSeconds)
	}
	if r.BackoffRate < 1 {
		v.at(i, "retry.backoff", "retry backoff must be at least 1.0, got %g", r.BackoffRate)
	}
	if r.MaxDelaySeconds < 0 {
		v.at(i, "retry.max_delay", "retry max_delay must not be negative, got %ds", r.MaxDelaySeconds)
	}
	v.when(i, st)
}

// reservedHeaders are set by docpipe or by HTTP itself.
var reservedHeaders = []string{"Host", "Content-Type", "Content-Length", "Transfer-Encoding", "Connection", "Te", "Trailer", "Upgrade"}

func (v *validator) headers(i int, hs map[string]pipeline.HeaderValue) {
	for _, name := range slices.Sorted(maps.Keys(hs)) {
		switch h := hs[name]; {
		case !httpguts.ValidHeaderFieldName(name):
			v.at(i, "run", "header %q is not a valid header name", name)
		case slices.Contains(reservedHeaders, http.CanonicalHeaderKey(name)):
			v.at(i, "run", "header %s is set by docpipe, not the pipeline file", name)
		case !nameForms().env.MatchString(h.Env):
			v.at(i, "run", "header %s: env must name an environment variable (letters, digits, _), got %q", name, h.Env)
		}
	}
}

func (v *validator) run(i int, st pipeline.Stage) {
	r := st.Run
	if len(r.Headers) > 0 && r.Kind() != pipeline.RunHTTP {
		v.at(i, "run", "headers are for http stages")
	}
	switch kinds := r.Kinds(); len(kinds) {
	case 0:
		v.at(i, "run", "run must set one of builtin, command, http, lambda, review")
		return
	case 1:
	default:
		v.at(i, "run", "run sets %s; set exactly one", joinKinds(kinds))
		return
	}
	// Users' stages take any settings (they arrive in the request); a
	// builtin takes those its schema knows, checked below.
	if len(st.Settings) > 0 && r.Kind() == pipeline.RunBuiltin && !slices.Contains(pipeline.AIBuiltins, r.Builtin) {
		v.at(i, "settings", "builtin %q takes no settings (the builtins that do: %s)", r.Builtin, strings.Join(pipeline.AIBuiltins, ", "))
	}
	if len(st.Settings) > 0 && r.Kind() == pipeline.RunReview {
		v.at(i, "settings", "a review takes no settings")
	}
	switch r.Kind() {
	case pipeline.RunBuiltin:
		switch {
		case !slices.Contains(pipeline.Builtins, r.Builtin):
			v.at(i, "run", "unknown builtin %q (want one of %s)", r.Builtin, strings.Join(pipeline.Builtins, ", "))
		case slices.Contains(pipeline.IngestionStages, r.Builtin) && r.Builtin != st.Name:
			v.at(i, "run", "builtin %q is an ingestion stage and runs only as the stage of that name", r.Builtin)
		case slices.Contains(pipeline.AIBuiltins, r.Builtin):
			provider, _ := AIProvider(r.Builtin)
			_, probs := ai.ParseSettings(provider, st.Settings)
			for _, p := range probs {
				field := "settings"
				if p.Key != "" {
					field = "settings." + p.Key
				}
				v.at(i, field, "%s", p.Msg)
			}
		case (r.Builtin == pipeline.StepSegmentAnalyzer) != (st.Scope == pipeline.ScopeSegment):
			v.at(i, "run", "builtin %q runs at %s scope", r.Builtin, builtinScope(r.Builtin))
		}
	case pipeline.RunCommand:
		v.program(i, r.Command[0])
	case pipeline.RunHTTP:
		u, err := url.Parse(r.HTTP)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.at(i, "run", "http must be an http:// or https:// URL, got %q", redact.URL(r.HTTP))
		}
		v.headers(i, r.Headers)
	case pipeline.RunLambda:
		if v.target == TargetEmbedded {
			v.at(i, "run", "lambda runs only on the AWS target, not the embedded engine")
		} else if !strings.HasPrefix(r.Lambda, "arn:") || !strings.Contains(r.Lambda, ":lambda:") {
			v.at(i, "run", "lambda must be a Lambda function ARN, got %q", r.Lambda)
		}
	case pipeline.RunReview:
		v.review(i, st)
	}
}

// review checks a review stage: someone to decide, a due date, and
// outcomes the engine knows.
func (v *validator) review(i int, st pipeline.Stage) {
	rv := st.Run.Review
	switch {
	case len(rv.Assign) == 0 && rv.Group == "":
		v.at(i, "run", "review needs assign: [names] or group: NAME")
	case len(rv.Assign) > 0 && rv.Group != "":
		v.at(i, "run", "review sets both assign and group; set one")
	}
	for _, n := range append(slices.Clone(rv.Assign), rv.Group) {
		if n != "" && !nameForms().reviewer.MatchString(n) {
			v.at(i, "run", "reviewer %q must be letters, digits, '_', '-', '+' or '@'", n)
		}
	}
	if st.Scope != pipeline.ScopeDocument {
		v.at(i, "scope", "a review runs once per document, at document scope")
	}
	if rv.DueSeconds <= 0 {
		v.at(i, "run", "review needs due: a duration such as 72h")
	}
	if rv.HardLimitSeconds != 0 && rv.HardLimitSeconds < rv.DueSeconds {
		v.at(i, "run", "hard_limit %ds comes before due %ds", rv.HardLimitSeconds, rv.DueSeconds)
	}
	switch rv.OnTimeout {
	case "", pipeline.ReviewFail:
	case pipeline.ReviewEscalate:
		if rv.HardLimitSeconds == 0 {
			v.at(i, "run", "on_timeout: escalate needs a hard_limit")
		}
	default:
		v.at(i, "run", "on_timeout must be fail or escalate, got %q", rv.OnTimeout)
	}
	if rv.OnReject != "" && rv.OnReject != pipeline.ReviewFail {
		v.at(i, "run", "on_reject must be fail, got %q", rv.OnReject)
	}
}

func builtinScope(builtin string) pipeline.Scope {
	if builtin == pipeline.StepSegmentAnalyzer {
		return pipeline.ScopeSegment
	}
	return pipeline.ScopeDocument
}

func joinKinds(kinds []pipeline.RunKind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, " and ")
}

// command checks what only a command stage may set: batch, for a segment
// stage, and env, the names of variables it gets.
func (v *validator) command(i int, st pipeline.Stage) {
	isCommand := st.Run.Kind() == pipeline.RunCommand
	switch {
	case st.Run.Batch && !isCommand:
		v.at(i, "run.batch", "batch is for command stages")
	case st.Run.Batch && st.Scope != pipeline.ScopeSegment:
		v.at(i, "run.batch", "batch runs one process for a batch of segments; this stage runs at %s scope, set scope: segment", st.Scope)
	}
	if len(st.Env) > 0 && !isCommand {
		v.at(i, "env", "env is for command stages, which run here with a minimal environment")
	}
	seen := map[string]bool{}
	for _, name := range st.Env {
		switch {
		case !childenv.ValidName(name):
			v.at(i, "env", "env %q is not a variable name (letters, digits and '_', not starting with a digit)", name)
		case seen[name]:
			v.at(i, "env", "env names %q twice", name)
		}
		seen[name] = true
	}
}

// program checks that a command's program exists: a path against the
// pipeline's folder, a bare name on PATH (embedded target only: on AWS the
// workers' PATH is what counts).
func (v *validator) program(i int, program string) {
	if !strings.ContainsRune(program, '/') && !strings.ContainsRune(program, filepath.Separator) {
		if v.target == TargetEmbedded {
			if _, err := exec.LookPath(program); err != nil {
				v.at(i, "run", "command %q is not found on PATH", program)
			}
		}
		return
	}
	path := program
	if !filepath.IsAbs(path) {
		path = filepath.Join(v.def.Dir, path)
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		v.at(i, "run", "command %q is not found (looked at %s)", program, path)
	case info.IsDir():
		v.at(i, "run", "command %q is a folder", program)
	case info.Mode().Perm()&0o111 == 0:
		v.at(i, "run", "command %q is not executable", program)
	}
}

func (v *validator) needs(i int, st pipeline.Stage) {
	ingestion := slices.Contains(pipeline.IngestionStages, st.Name)
	seen := map[string]bool{}
	for _, n := range st.Needs {
		switch _, ok := v.def.Stage(n); {
		case seen[n]:
			v.at(i, "needs", "needs %q twice", n)
		case n == st.Name:
			// reported as a cycle
		case !ok:
			v.at(i, "needs", "needs %q, which is not a stage", n)
		case !ingestion && n != pipeline.StepSegmentBuilder && slices.Contains(pipeline.IngestionStages, n):
			v.at(i, "needs", "needs %q; stages after the ingestion head need segment_builder or a later stage", n)
		}
		seen[n] = true
	}
	if len(st.Needs) == 0 && !ingestion {
		v.at(i, "needs", "needs nothing; stages after the ingestion head need segment_builder or a later stage")
	}
}

// ingestion checks the fixed head: in order, at document scope, and
// segment_builder builtin and unconditional.
func (v *validator) ingestion(i int, st pipeline.Stage) {
	if !slices.Contains(pipeline.IngestionStages, st.Name) {
		return
	}
	if want := ingestionNeeds(st.Name); !slices.Equal(st.Needs, want) {
		v.at(i, "needs", "the ingestion stages run in a fixed order; %s needs %s", st.Name, orNothing(want))
	}
	if st.Scope != pipeline.ScopeDocument {
		v.at(i, "scope", "an ingestion stage runs at document scope")
	}
	if st.Name == pipeline.StepSegmentBuilder {
		if st.Run.Kind() != pipeline.RunBuiltin || st.Run.Builtin != pipeline.StepSegmentBuilder {
			v.at(i, "run", "segment_builder writes the segments and the manifest and must stay builtin")
		}
		if st.When != nil {
			v.at(i, "when", "segment_builder always runs; it cannot have when")
		}
	}
}

func orNothing(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}

func (v *validator) when(i int, st pipeline.Stage) {
	w := st.When
	if w == nil {
		return
	}
	if len(w.Format) == 0 && len(w.Language) == 0 && w.Pages == nil {
		v.at(i, "when", "when has no conditions (format, language, pages)")
	}
	for _, f := range w.Format {
		if formats := pipeline.WhenFormats(); !slices.Contains(formats, f) {
			v.at(i, "when", "unknown format %q (want one of %s)", f, strings.Join(formats, ", "))
		}
	}
	for _, l := range w.Language {
		if !nameForms().language.MatchString(l) {
			v.at(i, "when", "language %q is not an ISO 639-1 code such as en", l)
		}
	}
	if p := w.Pages; p != nil {
		if p.Min < 0 || p.Max < 0 {
			v.at(i, "when", "pages min and max must not be negative")
		} else if p.Max > 0 && p.Min > p.Max {
			v.at(i, "when", "pages min %d is more than max %d", p.Min, p.Max)
		}
	}
	if !v.def.HasPath(pipeline.StepFormatParser, st.Name) {
		v.at(i, "when", "when matches what format_parser finds out, but this stage does not come after format_parser")
	}
}

// cycles reports every cycle in needs once, as a -> b -> a (a needs b
// needs a), at the line of the first stage's needs.
func (v *validator) cycles() {
	index := map[string]int{}
	for i, st := range v.def.Stages {
		if _, dup := index[st.Name]; !dup {
			index[st.Name] = i
		}
	}
	const (
		unseen = iota
		onPath
		finished
	)
	state := make([]int, len(v.def.Stages))
	var path []int
	reported := map[string]bool{}
	var visit func(i int)
	visit = func(i int) {
		state[i] = onPath
		path = append(path, i)
		for _, n := range v.def.Stages[i].Needs {
			j, ok := index[n]
			if !ok {
				continue
			}
			switch state[j] {
			case unseen:
				visit(j)
			case onPath:
				start := slices.Index(path, j)
				cycle := slices.Clone(path[start:])
				names := make([]string, 0, len(cycle)+1)
				for _, k := range cycle {
					names = append(names, v.def.Stages[k].Name)
				}
				key := canonical(names)
				if !reported[key] {
					reported[key] = true
					v.at(j, "needs", "needs form a cycle: %s -> %s", strings.Join(names, " -> "), names[0])
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = finished
	}
	for i := range v.def.Stages {
		if state[i] == unseen {
			visit(i)
		}
	}
}

// canonical names a cycle independently of where it was entered.
func canonical(names []string) string {
	m := slices.Index(names, slices.Min(names))
	return strings.Join(append(slices.Clone(names[m:]), names[:m]...), " ")
}

// fanOut reports segment stages that would have to wait for a document
// stage that itself waits for segment stages: all segment stages run in one
// fan-out, which cannot resume after a document stage that follows it.
func (v *validator) fanOut() {
	scope := map[string]pipeline.Scope{}
	for _, st := range v.def.Stages {
		scope[st.Name] = st.Scope
	}
	for i, st := range v.def.Stages {
		if st.Scope != pipeline.ScopeSegment {
			continue
		}
		for _, a := range v.def.Ancestors(st.Name) {
			if scope[a] != pipeline.ScopeDocument || a == st.Name {
				continue
			}
			seg := slices.IndexFunc(v.def.Ancestors(a), func(n string) bool { return scope[n] == pipeline.ScopeSegment && n != a })
			if seg < 0 {
				continue
			}
			v.at(i, "needs", "a segment stage cannot come after document stage %q, which runs after the segment fan-out (it needs segment stage %q)", a, v.def.Ancestors(a)[seg])
			break
		}
	}
}
