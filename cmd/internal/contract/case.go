// Package contract checks docpipe's promise to pipeline authors with
// generated cases: random valid pipeline files, random faults of their
// stages per document and segment, and an oracle that says what every
// surface (segment status, step counts, run --json, the exit status,
// status --failed, show --stage, the outcome event) must then report.
//
// It is test support: the contract tests in this package run it on the
// embedded engine, and the integration suite can run the same cases on
// Step Functions. Production code must not import it.
package contract

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Stage kinds a case draws from.
const (
	KindCommand = "command"
	KindHTTP    = "http"
	KindBuiltin = "builtin"
)

// Scopes, as pipeline files write them.
const (
	ScopeDocument = "document"
	ScopeSegment  = "segment"
)

// segmentBuilder is the last ingestion stage, which every user stage
// eventually needs.
const segmentBuilder = "segment_builder"

// Stage is one stage of a generated pipeline.
type Stage struct {
	Name    string
	Scope   string
	Kind    string
	Builtin string // for KindBuiltin
	// Batch runs a command stage in batch mode (one process per batch).
	Batch bool
	Needs []string
	// When is nil for no condition; Match says whether it matches every
	// generated document.
	When *When
	// Attempts is the retry policy's attempts (retries after the first
	// failure); Timeout is in whole seconds.
	Attempts int
	Timeout  int
	// Variant, when not 0, is written as the stage's settings
	// ({variant: N}); the fake stages echo it in their answers.
	Variant int
}

// When is a stage's condition and whether every generated document meets it.
type When struct {
	YAML  string // the flow mapping written after "when: "
	Match bool
}

// Doc is one generated input document.
type Doc struct {
	Name     string // file name, unique within the case
	Sections int
}

// FaultKind is what a fake stage does on a call.
type FaultKind string

// Fault kinds. The transient ones fail the first Times calls and then
// answer normally; the permanent ones fail every call.
const (
	FaultExit      FaultKind = "exit"      // exit 3 with "boom" on stderr
	FaultKill      FaultKind = "kill"      // the process sends itself SIGKILL
	FaultHTTP400   FaultKind = "http400"   // HTTP 400
	FaultMalformed FaultKind = "malformed" // output that is not JSON
	FaultEmpty     FaultKind = "empty"     // no output at all
	FaultTempExit  FaultKind = "exit75"    // exit 75 (EX_TEMPFAIL)
	FaultTimeout   FaultKind = "timeout"   // runs past the stage's timeout
	FaultHTTP500   FaultKind = "http500"
	FaultHTTP429   FaultKind = "http429"
)

// Transient reports whether the stage's retry policy may recover the fault.
func (k FaultKind) Transient() bool {
	switch k {
	case FaultTempExit, FaultTimeout, FaultHTTP500, FaultHTTP429:
		return true
	}
	return false
}

// Fault is what a stage does for one document and segment (segment 0: the
// document-scope call).
type Fault struct {
	Kind  FaultKind `json:"kind"`
	Times int       `json:"times,omitempty"` // transient faults: calls that fail first
}

// FaultKey names one call site: a document, a stage and a segment index
// (0 for a document-scope stage).
type FaultKey struct {
	Doc     string `json:"doc"`
	Stage   string `json:"stage"`
	Segment int    `json:"segment"`
}

func (k FaultKey) String() string { return fmt.Sprintf("%s/%s/%d", k.Doc, k.Stage, k.Segment) }

// Case is one generated pipeline, its documents and its faults.
type Case struct {
	Name           string
	BatchSize      int
	MaxConcurrency int
	Stages         []Stage
	Docs           []Doc
	Faults         map[FaultKey]Fault
}

// Stage returns the stage called name.
func (c *Case) Stage(name string) (Stage, bool) {
	i := slices.IndexFunc(c.Stages, func(s Stage) bool { return s.Name == name })
	if i < 0 {
		return Stage{}, false
	}
	return c.Stages[i], true
}

// Ancestors returns every user stage name needs, directly or not.
func (c *Case) Ancestors(name string) map[string]bool {
	out := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		st, ok := c.Stage(n)
		if !ok {
			return
		}
		for _, p := range st.Needs {
			if _, user := c.Stage(p); user && !out[p] {
				out[p] = true
				walk(p)
			}
		}
	}
	walk(name)
	return out
}

// Runs reports whether a stage runs on the generated documents (its
// condition, if any, matches).
func (s Stage) Runs() bool { return s.When == nil || s.When.Match }

// Endpoints say where a case's user stages are served: the fake command's
// argv (the fault plan's path is appended) and the fake HTTP service's
// base URL (the stage name is appended as the path).
type Endpoints struct {
	Command []string
	// CommandEnv names the variables of docpipe's environment the command
	// stages get (a command stage gets a minimal environment otherwise).
	CommandEnv []string
	HTTP       string
}

// PipelineYAML renders the case as a pipeline file.
func (c *Case) PipelineYAML(ep Endpoints, planPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", c.Name)
	fmt.Fprintf(&b, "description: generated contract case\n")
	fmt.Fprintf(&b, "batch_size: %d\n", c.BatchSize)
	fmt.Fprintf(&b, "max_concurrency: %d\n", c.MaxConcurrency)
	b.WriteString("stages:\n")
	for _, s := range c.Stages {
		fmt.Fprintf(&b, "  - name: %s\n", s.Name)
		fmt.Fprintf(&b, "    scope: %s\n", s.Scope)
		fmt.Fprintf(&b, "    needs: [%s]\n", strings.Join(s.Needs, ", "))
		switch s.Kind {
		case KindBuiltin:
			fmt.Fprintf(&b, "    run: {builtin: %s}\n", s.Builtin)
		case KindCommand:
			argv := append(slices.Clone(ep.Command), planPath)
			if s.Batch {
				argv = append(argv, batchArg)
			}
			quoted := make([]string, len(argv))
			for i, a := range argv {
				quoted[i] = fmt.Sprintf("%q", a)
			}
			batch := ""
			if s.Batch {
				batch = ", batch: true"
			}
			fmt.Fprintf(&b, "    run: {command: [%s]%s}\n", strings.Join(quoted, ", "), batch)
			if len(ep.CommandEnv) > 0 {
				fmt.Fprintf(&b, "    env: [%s]\n", strings.Join(ep.CommandEnv, ", "))
			}
		case KindHTTP:
			fmt.Fprintf(&b, "    run: {http: %q}\n", strings.TrimSuffix(ep.HTTP, "/")+"/"+s.Name)
		}
		if s.Kind != KindBuiltin {
			fmt.Fprintf(&b, "    timeout: %ds\n", s.Timeout)
			fmt.Fprintf(&b, "    retry: {attempts: %d, interval: 1s, backoff: 1, max_delay: 1s}\n", s.Attempts)
		}
		if s.When != nil {
			fmt.Fprintf(&b, "    when: %s\n", s.When.YAML)
		}
		if s.Variant != 0 {
			fmt.Fprintf(&b, "    settings: {variant: %d}\n", s.Variant)
		}
	}
	return b.String()
}

// DocText is the Markdown of a generated document: one heading and one
// paragraph a section, so each section becomes one segment.
func DocText(d Doc) string {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	var b strings.Builder
	for i := range d.Sections {
		fmt.Fprintf(&b, "# Section %d of %s\n\n", i+1, strings.TrimSuffix(d.Name, ".md"))
		fmt.Fprintf(&b, "The %s paragraph talks about %s and %s in plain English words.\n\n", words[i%len(words)], words[(i+3)%len(words)], words[(i+5)%len(words)])
	}
	return b.String()
}

// String prints the case so that a failure report holds all of it.
func (c *Case) String() string {
	var b strings.Builder
	b.WriteString(c.PipelineYAML(Endpoints{Command: []string{"<fake-stage>"}, HTTP: "http://<fake-service>"}, "<plan.json>"))
	b.WriteString("documents:\n")
	for _, d := range c.Docs {
		fmt.Fprintf(&b, "  %s: %d sections\n", d.Name, d.Sections)
	}
	b.WriteString("faults:\n")
	keys := make([]FaultKey, 0, len(c.Faults))
	for k := range c.Faults {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	if len(keys) == 0 {
		b.WriteString("  none\n")
	}
	for _, k := range keys {
		f := c.Faults[k]
		if f.Kind.Transient() {
			fmt.Fprintf(&b, "  %s: %s x%d\n", k, f.Kind, f.Times)
		} else {
			fmt.Fprintf(&b, "  %s: %s\n", k, f.Kind)
		}
	}
	return b.String()
}
