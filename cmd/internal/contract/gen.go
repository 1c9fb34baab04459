package contract

import (
	"fmt"
	"slices"

	"pgregory.net/rapid"
)

// Options tune the generator.
type Options struct {
	// MaxStages bounds the user stages (1-8).
	MaxStages int
	// MaxDocs bounds the documents a case runs on.
	MaxDocs int
	// BatchMode draws command stages in batch mode too.
	BatchMode bool
	// PermanentFaultsOnly draws no transient faults (nothing to retry).
	PermanentFaultsOnly bool
	// LoneDocumentFaults gives faults only to the document stages that run
	// alone at their level, not in a Parallel state beside another stage.
	LoneDocumentFaults bool
}

// DefaultOptions are the sizes the contract test runs.
func DefaultOptions() Options {
	return Options{MaxStages: 8, MaxDocs: 3, BatchMode: true}
}

// CacheOptions are the sizes of the cases that check the stage cache
// (Runner.RunCached): smaller, and with faults whose calls do the same
// in every run.
func CacheOptions() Options {
	return Options{MaxStages: 5, MaxDocs: 2, BatchMode: true, PermanentFaultsOnly: true, LoneDocumentFaults: true}
}

// whens are the conditions a stage may carry; the generated documents are
// English Markdown of one page.
var whens = []When{
	{YAML: "{format: [markdown, text]}", Match: true},
	{YAML: "{pages: {min: 1}}", Match: true},
	{YAML: "{format: [pdf, image]}", Match: false},
	{YAML: "{pages: {min: 1000}}", Match: false},
	{YAML: "{language: [de]}", Match: false},
}

var (
	commandPermanent = []FaultKind{FaultExit, FaultKill, FaultMalformed, FaultEmpty}
	// Timeouts cost the stage's timeout per try, so they are drawn rarely.
	commandTransient = []FaultKind{FaultTempExit, FaultTempExit, FaultTempExit, FaultTempExit, FaultTempExit, FaultTempExit, FaultTempExit, FaultTimeout}
	httpPermanent    = []FaultKind{FaultHTTP400, FaultMalformed, FaultEmpty}
	httpTransient    = []FaultKind{FaultHTTP500, FaultHTTP429, FaultHTTP500, FaultHTTP429, FaultHTTP500, FaultHTTP429, FaultHTTP500, FaultTimeout}
)

// Generator draws valid cases.
func Generator(opts Options) *rapid.Generator[Case] {
	return rapid.Custom(func(t *rapid.T) Case { return draw(t, opts) })
}

func draw(t *rapid.T, opts Options) Case {
	c := Case{
		Name:           "contract",
		BatchSize:      rapid.IntRange(1, 50).Draw(t, "batch_size"),
		MaxConcurrency: rapid.IntRange(1, 4).Draw(t, "max_concurrency"),
		Faults:         map[FaultKey]Fault{},
	}
	n := rapid.IntRange(1, opts.MaxStages).Draw(t, "stages")
	for i := range n {
		c.Stages = append(c.Stages, drawStage(t, &c, i, opts))
	}
	for i := range rapid.IntRange(1, opts.MaxDocs).Draw(t, "docs") {
		c.Docs = append(c.Docs, Doc{Name: fmt.Sprintf("d%d.md", i+1), Sections: rapid.IntRange(2, 6).Draw(t, "sections")})
	}
	drawFaults(t, &c, opts)
	for i := range c.Stages {
		drawPolicy(t, &c, &c.Stages[i])
	}
	return c
}

// drawStage draws the stage at position i; it may need only stages before
// it, so the needs form a DAG. A segment stage may not follow a document
// stage that follows a segment stage (validation's fan-out rule).
func drawStage(t *rapid.T, c *Case, i int, opts Options) Stage {
	builtins := availableBuiltins(c)
	kinds := []string{KindCommand, KindCommand, KindHTTP}
	if len(builtins) > 0 {
		kinds = append(kinds, KindBuiltin)
	}
	st := Stage{Name: fmt.Sprintf("s%d", i+1), Kind: rapid.SampledFrom(kinds).Draw(t, "kind")}
	if st.Kind == KindBuiltin {
		st.Builtin = rapid.SampledFrom(builtins).Draw(t, "builtin")
		st.Name = st.Builtin
		st.Scope = ScopeDocument
		if st.Builtin == "segment_analyzer" {
			st.Scope = ScopeSegment
		}
	} else {
		st.Scope = rapid.SampledFrom([]string{ScopeDocument, ScopeSegment}).Draw(t, "scope")
		if st.Kind == KindCommand && st.Scope == ScopeSegment && opts.BatchMode {
			st.Batch = rapid.Bool().Draw(t, "batch")
		}
	}
	var eligible []string
	for _, p := range c.Stages {
		if st.Scope == ScopeDocument || p.Scope == ScopeSegment || !hasSegmentAncestor(c, p.Name) {
			eligible = append(eligible, p.Name)
		}
	}
	switch st.Builtin {
	case "graph_builder":
		st.Needs = []string{"segment_analyzer"}
	case "document_summarizer":
		st.Needs = []string{rapid.SampledFrom(presentOf(c, "segment_analyzer", "graph_builder")).Draw(t, "summarizer_needs")}
	}
	if len(eligible) > 0 {
		for _, p := range rapid.SliceOfNDistinct(rapid.SampledFrom(eligible), 0, 2, rapid.ID).Draw(t, "needs") {
			if !slices.Contains(st.Needs, p) {
				st.Needs = append(st.Needs, p)
			}
		}
	}
	if len(st.Needs) == 0 {
		st.Needs = []string{segmentBuilder}
	}
	if st.Kind != KindBuiltin && rapid.IntRange(0, 4).Draw(t, "has_when") == 0 {
		w := rapid.SampledFrom(whens).Draw(t, "when")
		st.When = &w
	}
	return st
}

// availableBuiltins are the builtins a stage may still run: each once,
// graph_builder after segment_analyzer, document_summarizer after one of
// them.
func availableBuiltins(c *Case) []string {
	has := func(n string) bool { _, ok := c.Stage(n); return ok }
	var out []string
	if !has("segment_analyzer") {
		out = append(out, "segment_analyzer")
	}
	if has("segment_analyzer") && !has("graph_builder") {
		out = append(out, "graph_builder")
	}
	if (has("segment_analyzer") || has("graph_builder")) && !has("document_summarizer") {
		out = append(out, "document_summarizer")
	}
	return out
}

func presentOf(c *Case, names ...string) []string {
	var out []string
	for _, n := range names {
		if _, ok := c.Stage(n); ok {
			out = append(out, n)
		}
	}
	return out
}

func hasSegmentAncestor(c *Case, name string) bool {
	for a := range c.Ancestors(name) {
		if st, _ := c.Stage(a); st.Scope == ScopeSegment {
			return true
		}
	}
	return false
}

// besideAnother reports whether st runs side by side with another stage:
// one of the same phase and level.
func (c *Case) besideAnother(st Stage) bool {
	return slices.ContainsFunc(c.Stages, func(o Stage) bool {
		return o.Name != st.Name && c.phase(o) == c.phase(st) && c.level(o) == c.level(st)
	})
}

// drawFaults gives each call site of a user's command or HTTP stage a
// fault with a small probability.
func drawFaults(t *rapid.T, c *Case, opts Options) {
	for _, d := range c.Docs {
		for _, st := range c.Stages {
			if st.Kind == KindBuiltin || opts.LoneDocumentFaults && st.Scope == ScopeDocument && c.besideAnother(st) {
				continue
			}
			segs := []int{0}
			if st.Scope == ScopeSegment {
				segs = segs[:0]
				for i := 1; i <= d.Sections; i++ {
					segs = append(segs, i)
				}
			}
			for _, seg := range segs {
				if rapid.IntRange(0, 9).Draw(t, "fault?") != 0 {
					continue
				}
				perm, trans := commandPermanent, commandTransient
				if st.Kind == KindHTTP {
					perm, trans = httpPermanent, httpTransient
				}
				var f Fault
				if !opts.PermanentFaultsOnly && rapid.Bool().Draw(t, "transient") {
					f = Fault{Kind: rapid.SampledFrom(trans).Draw(t, "fault"), Times: 1}
					if f.Kind != FaultTimeout {
						f.Times = rapid.IntRange(1, 2).Draw(t, "times")
					}
				} else {
					f = Fault{Kind: rapid.SampledFrom(perm).Draw(t, "fault")}
				}
				c.Faults[FaultKey{Doc: d.Name, Stage: st.Name, Segment: seg}] = f
			}
		}
	}
}

// drawPolicy sets a user stage's timeout and retries once its faults are
// known: the timeout is short only where a fault needs it to pass, and
// the retries are either enough for every transient fault of a batch to
// recover or (sometimes) too few.
func drawPolicy(t *rapid.T, c *Case, st *Stage) {
	if st.Kind == KindBuiltin {
		return
	}
	st.Timeout = 30
	need := 0
	for _, d := range c.Docs {
		for _, b := range c.batches(*st, d) {
			sum := 0
			for _, seg := range b {
				f, ok := c.Faults[FaultKey{Doc: d.Name, Stage: st.Name, Segment: seg}]
				if !ok || !f.Kind.Transient() {
					continue
				}
				if f.Kind == FaultTimeout {
					st.Timeout = 2
				}
				sum += f.Times
			}
			need = max(need, sum)
		}
	}
	if rapid.IntRange(0, 3).Draw(t, "few_retries") == 0 {
		st.Attempts = rapid.IntRange(1, 2).Draw(t, "attempts")
		return
	}
	st.Attempts = max(1, need)
}

// batches splits a document's call sites for st as the engine batches
// them: the document-scope call alone, or runs of BatchSize segments.
func (c *Case) batches(st Stage, d Doc) [][]int {
	if st.Scope != ScopeSegment {
		return [][]int{{0}}
	}
	var out [][]int
	for from := 1; from <= d.Sections; from += c.BatchSize {
		var b []int
		for i := from; i < from+c.BatchSize && i <= d.Sections; i++ {
			b = append(b, i)
		}
		out = append(out, b)
	}
	return out
}
