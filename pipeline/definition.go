package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// Scope says what one invocation of a stage works on.
type Scope string

const (
	ScopeDocument Scope = "document" // once per workflow
	ScopeSegment  Scope = "segment"  // once per manifest batch of segments, fanned out by a Distributed Map
)

// Stage names: the default pipeline, in order.
const (
	StepSegmentPrep        = "segment_prep"
	StepFormatParser       = "format_parser"
	StepOCR                = "ocr"
	StepSegmentBuilder     = "segment_builder"
	StepSegmentAnalyzer    = "segment_analyzer"
	StepGraphBuilder       = "graph_builder"
	StepDocumentSummarizer = "document_summarizer"
)

// IngestionStages are the fixed head of every pipeline, in order: they sniff
// the document, extract its text and write the segments and the manifest
// that every later stage reads.
var IngestionStages = []string{StepSegmentPrep, StepFormatParser, StepOCR, StepSegmentBuilder}

// Builtins are the stage handlers docpipe ships, the values of RunSpec.Builtin.
var Builtins = []string{
	StepSegmentPrep, StepFormatParser, StepOCR, StepSegmentBuilder,
	StepSegmentAnalyzer, StepGraphBuilder, StepDocumentSummarizer,
	BuiltinBedrockAnalyzer, BuiltinOpenAIAnalyzer,
}

// AI analysis builtins: run at segment or document scope, configured by
// the stage's settings (package ai reads them).
const (
	BuiltinBedrockAnalyzer = "bedrock_analyzer"
	BuiltinOpenAIAnalyzer  = "openai_analyzer"
)

// AIBuiltins lists the AI analysis builtins.
var AIBuiltins = []string{BuiltinBedrockAnalyzer, BuiltinOpenAIAnalyzer}

// Bookkeeping steps that are tasks in the state machine but not stages of
// the analysis: finalize decides the outcome from the segment counters;
// workflow_failed records a caught failure.
const (
	StepFinalize       = "finalize"
	StepWorkflowFailed = "workflow_failed"
)

// RetryPolicy is how a stage's transient failures are retried (jittered
// exponential backoff). Permanent errors are never retried.
type RetryPolicy struct {
	MaxAttempts     int     `json:"max_attempts"` // retries after the first failure, as ASL's MaxAttempts
	IntervalSeconds int     `json:"interval_seconds"`
	BackoffRate     float64 `json:"backoff_rate"`
	MaxDelaySeconds int     `json:"max_delay_seconds"`
}

// RunKind names how a stage runs.
type RunKind string

const (
	RunBuiltin RunKind = "builtin" // a handler docpipe ships
	RunCommand RunKind = "command" // a program run with the stage contract on stdin/stdout
	RunHTTP    RunKind = "http"    // a POST of the stage contract to a URL
	RunLambda  RunKind = "lambda"  // an AWS Lambda function (AWS target only)
	RunReview  RunKind = "review"  // a person approves or rejects before the pipeline goes on
)

// RunSpec says how a stage runs: exactly one kind is set (Batch only
// modifies Command).
type RunSpec struct {
	Builtin string `json:"builtin,omitempty"`
	// Command is argv. It runs with the pipeline file's folder
	// (Definition.Dir) as its working directory, so relative paths in it
	// resolve against that folder. The files it names in that folder are
	// part of the stage's cache key, by content: editing a script runs
	// the stage again.
	Command []string `json:"command,omitempty"`
	// Batch runs a segment stage's command once per batch of segments,
	// one JSON request a line on stdin, one answer a line on stdout.
	Batch  bool        `json:"batch,omitempty"`
	HTTP   string      `json:"http,omitempty"`
	Lambda string      `json:"lambda,omitempty"`
	Review *ReviewSpec `json:"review,omitempty"`
	// Headers are sent with an HTTP stage's requests, each value read
	// from an environment variable of the process running the stage, so
	// that a credential need not sit in the URL or the pipeline file.
	Headers map[string]HeaderValue `json:"headers,omitempty"`
}

// HeaderValue is where a header's value comes from.
type HeaderValue struct {
	Env string `json:"env"` // the environment variable holding it
}

// HeaderEnv maps each header to the variable its value comes from.
func (r RunSpec) HeaderEnv() map[string]string {
	if len(r.Headers) == 0 {
		return nil
	}
	m := make(map[string]string, len(r.Headers))
	for name, h := range r.Headers {
		m[name] = h.Env
	}
	return m
}

// Review outcomes a stage chooses between.
const (
	ReviewFail     = "fail"     // on_timeout and on_reject: the workflow fails
	ReviewEscalate = "escalate" // on_timeout: hand it to the group (or anyone) once, with a new due date
)

// ReviewSpec is a stage that waits for a person: who may decide, by when,
// and what happens past the hard limit or on a rejection.
type ReviewSpec struct {
	Assign []string `json:"assign,omitempty"` // reviewers by name
	Group  string   `json:"group,omitempty"`  // or a group of reviewers
	// DueSeconds is when the review is due after it opens; past it the
	// review is overdue (announced once).
	DueSeconds int `json:"due_seconds"`
	// HardLimitSeconds is when an undecided review times out; 0: never.
	HardLimitSeconds int    `json:"hard_limit_seconds,omitempty"`
	OnTimeout        string `json:"on_timeout,omitempty"` // ReviewFail (default) or ReviewEscalate
	OnReject         string `json:"on_reject,omitempty"`  // ReviewFail (default)
}

// Kinds returns the kinds that are set, in a fixed order.
func (r RunSpec) Kinds() []RunKind {
	var kinds []RunKind
	if r.Builtin != "" {
		kinds = append(kinds, RunBuiltin)
	}
	if len(r.Command) > 0 {
		kinds = append(kinds, RunCommand)
	}
	if r.HTTP != "" {
		kinds = append(kinds, RunHTTP)
	}
	if r.Lambda != "" {
		kinds = append(kinds, RunLambda)
	}
	if r.Review != nil {
		kinds = append(kinds, RunReview)
	}
	return kinds
}

// Kind returns how the stage runs, or "" when not exactly one kind is set
// (which validation rejects).
func (r RunSpec) Kind() RunKind {
	if kinds := r.Kinds(); len(kinds) == 1 {
		return kinds[0]
	}
	return ""
}

// PageRange bounds a document's page count; zero leaves a side open.
type PageRange struct {
	Min int `json:"min,omitempty"`
	Max int `json:"max,omitempty"`
}

// When restricts a stage to documents whose attributes match every
// condition given; a stage that does not match is skipped with the reason.
type When struct {
	Format   []string   `json:"format,omitempty"`   // format names or format groups (FormatGroups)
	Language []string   `json:"language,omitempty"` // ISO 639-1 codes
	Pages    *PageRange `json:"pages,omitempty"`
}

// FormatImage in When.Format matches every image format the sniffer knows.
const FormatImage = "image"

// FormatAudio in When.Format matches every audio format the sniffer knows.
const FormatAudio = "audio"

// formatGroups are the names When.Format accepts for a kind of format, and
// which formats belong to each.
var formatGroups = []struct {
	name   string
	member func(extract.Format) bool
}{
	{FormatImage, extract.Format.IsImage},
	{FormatAudio, extract.Format.IsAudio},
}

// FormatGroup returns the formats a group name stands for, in
// extract.Formats order, and false when name is no group.
func FormatGroup(name string) ([]string, bool) {
	for _, g := range formatGroups {
		if g.name != name {
			continue
		}
		var out []string
		for _, f := range extract.Formats {
			if g.member(f) {
				out = append(out, string(f))
			}
		}
		return out, true
	}
	return nil, false
}

// FormatGroups are the group names When.Format accepts, in the order users
// read them.
func FormatGroups() []string {
	out := make([]string, len(formatGroups))
	for i, g := range formatGroups {
		out[i] = g.name
	}
	return out
}

// WhenFormats are every value When.Format accepts: the sniffer's format
// names, then the group names.
func WhenFormats() []string {
	var out []string
	for _, f := range extract.Formats {
		out = append(out, string(f))
	}
	return append(out, FormatGroups()...)
}

// ExpandFormats is the one meaning of a When.Format list: the concrete
// formats it matches, each group name replaced by its members, sorted and
// without duplicates. Names that are neither stay as they are (validation
// rejects them).
func ExpandFormats(names []string) []string {
	var out []string
	for _, n := range names {
		if members, ok := FormatGroup(n); ok {
			out = append(out, members...)
			continue
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DocAttrs are what a When matches on: known once format_parser ran.
type DocAttrs struct {
	Format   string `json:"format"`   // as sniffed, e.g. "pdf"
	Language string `json:"language"` // ISO 639-1; "" when not known
	Pages    int    `json:"pages"`
}

// Matches reports whether doc satisfies w and, when it does not, why. A nil
// When matches everything.
func (w *When) Matches(doc DocAttrs) (bool, string) {
	if w == nil {
		return true, ""
	}
	if len(w.Format) > 0 && !slices.Contains(ExpandFormats(w.Format), doc.Format) {
		return false, fmt.Sprintf("format %s is not one of %s", orUnknown(doc.Format), strings.Join(w.Format, ", "))
	}
	if len(w.Language) > 0 && !slices.Contains(w.Language, doc.Language) {
		return false, fmt.Sprintf("language %s is not one of %s", orUnknown(doc.Language), strings.Join(w.Language, ", "))
	}
	if p := w.Pages; p != nil {
		if p.Min > 0 && doc.Pages < p.Min {
			return false, fmt.Sprintf("%d pages, fewer than %d", doc.Pages, p.Min)
		}
		if p.Max > 0 && doc.Pages > p.Max {
			return false, fmt.Sprintf("%d pages, more than %d", doc.Pages, p.Max)
		}
	}
	return true, ""
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Stage is one step of the pipeline definition.
type Stage struct {
	Name      string      `json:"name"`
	Label     string      `json:"label"`
	Scope     Scope       `json:"scope"`
	Needs     []string    `json:"needs,omitempty"` // stages that must finish first; none only for the first stage
	Run       RunSpec     `json:"run"`
	When      *When       `json:"when,omitempty"`
	Retryable bool        `json:"retryable"` // false: even transient errors fail at once
	Retry     RetryPolicy `json:"retry"`
	// TimeoutSeconds bounds one invocation.
	TimeoutSeconds int `json:"timeout_seconds"`
	// Settings configure a builtin that takes them (a model, its region,
	// the answer's schema); which keys it takes is the builtin's business.
	Settings map[string]any `json:"settings,omitempty"`
	// Env names the variables of docpipe's environment a command stage
	// gets besides the minimal set every command gets.
	Env []string `json:"env,omitempty"`
	// NoCache keeps the stage from reusing earlier outputs (and from
	// offering its own): for stages with side effects, whose running is
	// the point.
	NoCache bool `json:"no_cache,omitempty"`
}

// Definition is the whole pipeline as data. The state machine is generated
// from it; versions of it are stored as JSON.
type Definition struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Stages      []Stage `json:"stages"`
	// BatchSize is how many segments one segment-scope invocation handles.
	BatchSize int `json:"batch_size"`
	// MaxConcurrency bounds the fan-out of segment batches.
	MaxConcurrency int `json:"max_concurrency"`
	// Dir is the folder of the file the definition was read from, where
	// relative command paths resolve. Where the file lives is no part of
	// the definition, so it is neither stored nor hashed.
	Dir string `json:"-"`
	// Source says where in its file each part was written, for messages.
	Source *Source `json:"-"`
}

// Source records where a definition was read from. Lines maps a part to its
// line: "stages.3" (the stage at index 3 of Definition.Stages),
// "stages.3.timeout", "batch_size", ...
type Source struct {
	File  string
	Lines map[string]int
}

// DefaultRetry is the transient-failure policy of the default stages.
var DefaultRetry = RetryPolicy{MaxAttempts: 4, IntervalSeconds: 1, BackoffRate: 2, MaxDelaySeconds: 30}

// Stage returns the stage with the given name.
func (d Definition) Stage(name string) (Stage, bool) {
	for _, s := range d.Stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// StepNames returns the stage names in order followed by the bookkeeping
// steps: every task name the state machine can invoke.
func (d Definition) StepNames() []string {
	var names []string
	for _, s := range d.Stages {
		names = append(names, s.Name)
	}
	return append(names, StepFinalize, StepWorkflowFailed)
}

// Clone returns a deep copy, so callers may change it freely.
func (d Definition) Clone() Definition {
	c := d
	c.Stages = make([]Stage, len(d.Stages))
	for i, s := range d.Stages {
		s.Needs = slices.Clone(s.Needs)
		s.Env = slices.Clone(s.Env)
		s.Run.Command = slices.Clone(s.Run.Command)
		s.Run.Headers = maps.Clone(s.Run.Headers)
		s.Settings = maps.Clone(s.Settings) // values are replaced, never changed in place
		if s.Run.Review != nil {
			rv := *s.Run.Review
			rv.Assign = slices.Clone(rv.Assign)
			s.Run.Review = &rv
		}
		if s.When != nil {
			w := *s.When
			w.Format, w.Language = slices.Clone(w.Format), slices.Clone(w.Language)
			if w.Pages != nil {
				p := *w.Pages
				w.Pages = &p
			}
			s.When = &w
		}
		c.Stages[i] = s
	}
	return c
}

// ContentHash identifies the definition's content: the SHA-256 of its JSON
// encoding (struct fields in a fixed order, Dir and Source left out), hex.
func (d Definition) ContentHash() string {
	b, err := json.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("pipeline: encoding a definition: %v", err)) // only plain data: cannot happen
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TopoOrder returns the stages so that each comes after everything it
// needs; among stages free to go, the one listed first goes first. It fails
// on a repeated name, a need that names no stage, or a cycle.
func (d Definition) TopoOrder() ([]Stage, error) {
	index := make(map[string]int, len(d.Stages))
	for i, s := range d.Stages {
		if _, dup := index[s.Name]; dup {
			return nil, fmt.Errorf("pipeline: stage %q is defined twice", s.Name)
		}
		index[s.Name] = i
	}
	waiting := make([]int, len(d.Stages))
	for i, s := range d.Stages {
		for _, n := range s.Needs {
			if _, ok := index[n]; !ok {
				return nil, fmt.Errorf("pipeline: stage %q needs %q, which is not a stage", s.Name, n)
			}
		}
		waiting[i] = len(s.Needs)
	}
	order := make([]Stage, 0, len(d.Stages))
	done := make([]bool, len(d.Stages))
	for len(order) < len(d.Stages) {
		next := -1
		for i := range d.Stages {
			if !done[i] && waiting[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			return nil, fmt.Errorf("pipeline: the needs of %s form a cycle", d.Name)
		}
		done[next] = true
		order = append(order, d.Stages[next])
		for i, s := range d.Stages {
			for _, n := range s.Needs {
				if n == d.Stages[next].Name {
					waiting[i]--
				}
			}
		}
	}
	return order, nil
}

// Ancestors returns every stage name must wait for, directly or through
// others, in definition order.
func (d Definition) Ancestors(name string) []string {
	needs := make(map[string][]string, len(d.Stages))
	for _, s := range d.Stages {
		needs[s.Name] = s.Needs
	}
	return d.closure(name, func(n string) []string { return needs[n] })
}

// Dependents returns every stage that waits for name, directly or through
// others, in definition order.
func (d Definition) Dependents(name string) []string {
	direct := make(map[string][]string, len(d.Stages))
	for _, s := range d.Stages {
		for _, n := range s.Needs {
			direct[n] = append(direct[n], s.Name)
		}
	}
	return d.closure(name, func(n string) []string { return direct[n] })
}

// HasPath reports whether to waits for from, directly or through others.
func (d Definition) HasPath(from, to string) bool {
	return slices.Contains(d.Ancestors(to), from)
}

// closure walks edges from name (not included) and returns what it reaches,
// in definition order. Cycles end the walk, not the program.
func (d Definition) closure(name string, edges func(string) []string) []string {
	seen := map[string]bool{}
	stack := slices.Clone(edges(name))
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		stack = append(stack, edges(n)...)
	}
	var out []string
	for _, s := range d.Stages {
		if seen[s.Name] && s.Name != name {
			out = append(out, s.Name)
		}
	}
	return out
}
