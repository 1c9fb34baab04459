package contract

import (
	"slices"
	"sort"
)

// Workflow outcomes the oracle predicts.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusUnknown   = "" // the faults allow either (see Expect)
)

// AllSegmentsFailed stands for the finalizer among a failure's candidates:
// a workflow whose every segment failed fails.
const AllSegmentsFailed = "all segments failed"

// Expected is what the contract says one document's workflow ends as.
type Expected struct {
	Status string
	// Causes are what the workflow's error may name when it fails: stages,
	// or AllSegmentsFailed.
	Causes []string
	// SegmentsKnown says the segments reached their final status, so
	// Segments holds what each must be.
	SegmentsKnown bool
	// Segments maps a failed segment's index to the stages that may have
	// failed it; a segment not in it is done.
	Segments map[int][]string
	// Recovered lists the call sites whose transient faults the stage's
	// retries certainly absorbed, on a run that completed.
	Recovered []FaultKey
	// Succeeded lists the call sites certainly run with a normal answer,
	// on a run that completed: show --stage must hold that answer.
	Succeeded []FaultKey
	// Skipped lists the stages whose condition does not match.
	Skipped []string
}

// FailedCount is the number of segments expected to fail.
func (e Expected) FailedCount() int { return len(e.Segments) }

// phase is where the engine runs a stage: document stages before the
// segment fan-out, the fan-out, document stages after it.
type phase int

const (
	phasePre phase = iota
	phaseSegments
	phasePost
)

func (c *Case) phase(st Stage) phase {
	switch {
	case st.Scope == ScopeSegment:
		return phaseSegments
	case hasSegmentAncestor(c, st.Name):
		return phasePost
	}
	return phasePre
}

// level is a stage's rank within its phase: one more than the highest
// level among the stages of the same phase it needs. Stages of one level
// run side by side; a level starts when the one before has finished.
func (c *Case) level(st Stage) int {
	l := 0
	for _, n := range st.Needs {
		if p, ok := c.Stage(n); ok && c.phase(p) == c.phase(st) {
			l = max(l, c.level(p)+1)
		}
	}
	return l
}

// Expect predicts doc's outcome from the case's stages and faults, as the
// stage contract (pipeline/stagerun) and README describe it:
//
//   - a stage whose `when` does not match is skipped and runs nothing;
//   - a transient fault recovers when the stage's retries allow it; a
//     segment stage retries a whole batch, so a batch recovers for sure
//     when the retries cover the sum of its segments' transient calls,
//     and fails for sure when one segment it certainly runs fails more
//     often than the stage tries; in between, the outcome is unknown;
//   - a document stage's permanent fault, or a transient one its retries
//     do not absorb, fails the workflow, and so does a segment batch that
//     runs out of retries;
//   - a segment stage's permanent fault fails that segment only; the
//     stages after it (its descendants) never run the segment;
//   - a workflow whose every segment failed fails.
func (c *Case) Expect(doc Doc) Expected {
	e := Expected{Segments: map[int][]string{}}
	for _, st := range c.Stages {
		if !st.Runs() {
			e.Skipped = append(e.Skipped, st.Name)
		}
	}
	// Document phases fail at their lowest failing level.
	docFailures := func(ph phase) []string {
		best, causes := -1, []string(nil)
		for _, st := range c.Stages {
			if st.Scope != ScopeDocument || c.phase(st) != ph || !st.Runs() {
				continue
			}
			if c.documentStageOK(doc, st) {
				continue
			}
			switch l := c.level(st); {
			case best < 0 || l < best:
				best, causes = l, []string{st.Name}
			case l == best:
				causes = append(causes, st.Name)
			}
		}
		return causes
	}
	if causes := docFailures(phasePre); len(causes) > 0 {
		e.Status, e.Causes = StatusFailed, causes
		return e
	}
	var failing, unsure []string
	for _, st := range c.Stages {
		if st.Scope != ScopeSegment || !st.Runs() || st.Kind == KindBuiltin {
			continue
		}
		for _, b := range c.batches(st, doc) {
			switch c.batchOutcome(doc, st, b) {
			case batchFails:
				failing = appendOnce(failing, st.Name)
			case batchUnsure:
				unsure = appendOnce(unsure, st.Name)
			}
		}
	}
	switch {
	case len(failing) > 0:
		e.Status, e.Causes = StatusFailed, append(failing, unsure...)
		return e
	case len(unsure) > 0:
		e.Status, e.Causes = StatusUnknown, unsure
		return e
	}
	for seg := 1; seg <= doc.Sections; seg++ {
		if by := c.minimalFailers(doc, seg); len(by) > 0 {
			e.Segments[seg] = by
		}
	}
	hasSegmentStage := slices.ContainsFunc(c.Stages, func(s Stage) bool { return s.Scope == ScopeSegment })
	if causes := docFailures(phasePost); len(causes) > 0 {
		e.Status, e.Causes = StatusFailed, causes
		// Without a segment stage the finalizer gives segments their
		// status, and it does not run.
		e.SegmentsKnown = hasSegmentStage
		if !hasSegmentStage {
			e.Segments = map[int][]string{}
		}
		return e
	}
	e.SegmentsKnown = true
	if len(e.Segments) == doc.Sections {
		e.Status, e.Causes = StatusFailed, []string{AllSegmentsFailed}
		return e
	}
	e.Status = StatusCompleted
	for _, st := range c.Stages {
		if st.Kind == KindBuiltin || !st.Runs() {
			continue
		}
		for _, b := range c.batches(st, doc) {
			for _, seg := range b {
				key := FaultKey{Doc: doc.Name, Stage: st.Name, Segment: seg}
				if st.Scope == ScopeSegment && !c.certainlyRuns(doc, st, seg) {
					continue
				}
				f, faulty := c.Faults[key]
				switch {
				case !faulty:
					e.Succeeded = append(e.Succeeded, key)
				case f.Kind.Transient():
					e.Succeeded = append(e.Succeeded, key)
					e.Recovered = append(e.Recovered, key)
				}
			}
		}
	}
	return e
}

// documentStageOK reports whether a document stage that runs answers in
// the end.
func (c *Case) documentStageOK(doc Doc, st Stage) bool {
	f, ok := c.Faults[FaultKey{Doc: doc.Name, Stage: st.Name}]
	if !ok {
		return true
	}
	return f.Kind.Transient() && f.Times <= st.Attempts
}

// permanent reports whether st fails seg of doc for good.
func (c *Case) permanent(doc Doc, st Stage, seg int) bool {
	f, ok := c.Faults[FaultKey{Doc: doc.Name, Stage: st.Name, Segment: seg}]
	return ok && !f.Kind.Transient()
}

// mayRun reports whether segment stage st may run seg: it runs, and no
// stage before it failed the segment for good.
func (c *Case) mayRun(doc Doc, st Stage, seg int) bool {
	if !st.Runs() {
		return false
	}
	for a := range c.Ancestors(st.Name) {
		if p, _ := c.Stage(a); p.Scope == ScopeSegment && p.Runs() && c.permanent(doc, p, seg) {
			return false
		}
	}
	return true
}

// certainlyRuns reports whether st runs seg whatever the order of the
// stages that run side by side: no stage but st's descendants fails it.
func (c *Case) certainlyRuns(doc Doc, st Stage, seg int) bool {
	if !c.mayRun(doc, st, seg) {
		return false
	}
	for _, o := range c.Stages {
		if o.Name == st.Name || o.Scope != ScopeSegment || !o.Runs() || c.Ancestors(o.Name)[st.Name] {
			continue
		}
		if c.permanent(doc, o, seg) {
			return false
		}
	}
	return true
}

// minimalFailers are the stages that may be the one to fail seg for good:
// each has a permanent fault on it and no stage before it has one.
func (c *Case) minimalFailers(doc Doc, seg int) []string {
	var out []string
	for _, st := range c.Stages {
		if st.Scope == ScopeSegment && c.mayRun(doc, st, seg) && c.permanent(doc, st, seg) {
			out = append(out, st.Name)
		}
	}
	sort.Strings(out)
	return out
}

type batchResult int

const (
	batchRecovers batchResult = iota
	batchFails
	batchUnsure
)

// batchOutcome decides whether a segment stage's batch gets through its
// transient faults. Every failed try of the batch uses up at least one
// failing call, and at most one per segment: a try that fails stops the
// others, whose calls may or may not have started.
func (c *Case) batchOutcome(doc Doc, st Stage, batch []int) batchResult {
	upper, certain := 0, 0
	for _, seg := range batch {
		f, ok := c.Faults[FaultKey{Doc: doc.Name, Stage: st.Name, Segment: seg}]
		if !ok || !f.Kind.Transient() || !c.mayRun(doc, st, seg) {
			continue
		}
		upper += f.Times
		if c.certainlyRuns(doc, st, seg) {
			certain = max(certain, f.Times)
		}
	}
	switch {
	case upper <= st.Attempts:
		return batchRecovers
	case certain > st.Attempts:
		return batchFails
	}
	return batchUnsure
}

func appendOnce(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// ExpectAfterKill predicts doc's outcome when docpipe was killed with
// SIGKILL at some point and then resumed. What a kill changes:
//
//   - Retry counts live in the killed process: the resumed run tries a
//     stage afresh, while the fake's attempt counters go on from where
//     they were (an attempt may even be counted without docpipe ever
//     seeing its answer). A transient fault can therefore only fail
//     fewer tries than in an uninterrupted run, never more: an outcome
//     the uninterrupted oracle calls recovered stays recovered, and one
//     it calls failed may recover. The outcome lies between the run as
//     Expect says and the run where every transient fault recovers, and
//     is known only where those two agree.
//   - Permanent faults fail every call, so the segments they fail and the
//     stages after them that never run are the same.
//   - A failed try may have run in the killed process before docpipe
//     recorded it, so a recovered transient need not leave its retry in
//     the audit trail: Recovered is empty.
//   - Which stage names a failure is no longer the lowest failing level
//     of one world: any runnable stage with a fault on doc may.
func (c *Case) ExpectAfterKill(doc Doc) Expected {
	asIs := c.Expect(doc)
	healed := c.withoutTransientFaults().Expect(doc)
	e := Expected{Segments: map[int][]string{}, Skipped: asIs.Skipped}
	if asIs.Status == healed.Status {
		e.Status = asIs.Status
	}
	e.Causes = append(slices.Clone(asIs.Causes), healed.Causes...)
	for _, st := range c.Stages {
		if !st.Runs() {
			continue
		}
		for k := range c.Faults {
			if k.Doc == doc.Name && k.Stage == st.Name {
				e.Causes = appendOnce(e.Causes, st.Name)
			}
		}
	}
	if asIs.SegmentsKnown && healed.SegmentsKnown {
		e.SegmentsKnown, e.Segments = true, asIs.Segments
	}
	if e.Status == StatusCompleted {
		e.Succeeded = asIs.Succeeded
	}
	return e
}

// withoutTransientFaults is c with only its permanent faults: the run
// where every transient fault recovers.
func (c *Case) withoutTransientFaults() *Case {
	out := *c
	out.Faults = map[FaultKey]Fault{}
	for k, f := range c.Faults {
		if !f.Kind.Transient() {
			out.Faults[k] = f
		}
	}
	return &out
}
