package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Invariants of the stage cache, checked by RunCached.
const (
	InvCacheRerun   = "cache-rerun"   // a changed stage, what it feeds, and every failed call run again
	InvCacheReuse   = "cache-reuse"   // every other stage is reused, from the workflow it superseded
	InvCacheScratch = "cache-scratch" // a backfill's results equal a run from scratch with --no-cache
)

// keyedByWhatTheyRead are builtin stages whose reuse is not judged by their
// needs: the graph and the summary are keyed by what they read (the
// segments' analysis), not by the stages a pipeline says they need, so a
// changed user stage they are declared to need may rightly leave them
// reused.
var keyedByWhatTheyRead = map[string]bool{"graph_builder": true, "document_summarizer": true}

// WithVariant is c with the stage at index i given other settings: the
// next version of its pipeline.
func (c *Case) WithVariant(i int) *Case {
	out := *c
	out.Stages = slices.Clone(c.Stages)
	out.Stages[i].Variant++
	return &out
}

// UserStages are the indexes of c's user stages (command and HTTP): the
// ones whose settings a new version may change (builtins but the AI
// analyzers take none).
func (c *Case) UserStages() []int {
	var out []int
	for i, st := range c.Stages {
		if st.Kind != KindBuiltin {
			out = append(out, i)
		}
	}
	return out
}

// keyChanges reports whether st's cache key changes once changed has
// other settings: changed's own does (its definition), and so does a
// user's stage that needs it, when it runs (its answer, which echoes its
// settings, is in the key; a skipped stage answers nothing). Nothing else
// changes: the fake stages answer the same whatever their inputs, so the
// stages after those run with the inputs they had, and are reused.
func (c *Case) keyChanges(st Stage, changed string) bool {
	if st.Name == changed {
		return true
	}
	ch, _ := c.Stage(changed)
	return ch.Runs() && st.Kind != KindBuiltin && slices.Contains(st.Needs, changed)
}

// answeredNone reports whether changed is a segment stage that answered
// no segment of d for st to read: every call it made for d failed (the
// faults are permanent, so the backfill's fail alike). A document stage
// needing it then reads the same failures, with nothing that echoes the
// changed settings, and its key stays the same. It is not sure when a
// stage beside changed may have kept a segment from it, in one run and
// not the other.
func (c *Case) answeredNone(d Doc, st Stage, changed string, called, failed map[FaultKey]bool) (none, sure bool) {
	ch, _ := c.Stage(changed)
	if st.Scope != ScopeDocument || ch.Scope != ScopeSegment {
		return false, true
	}
	none, sure = true, true
	for _, b := range c.batches(ch, d) {
		for _, seg := range b {
			k := FaultKey{Doc: d.Name, Stage: changed, Segment: seg}
			if called[k] && !failed[k] {
				return false, true
			}
			if c.mayRun(d, ch, seg) && !c.certainlyRuns(d, ch, seg) && !called[k] {
				sure = false
			}
		}
	}
	return none, sure
}

// RunCached runs c as Run does, then moves its documents with docpipe
// backfill onto the next version, where the stage at index change has
// other settings, and checks the stage cache: exactly the stages whose
// definition or inputs changed run again, and every call that failed (a
// failure is never cached); all else is reused from the superseded
// workflow; and the backfill's results are what the oracle says of the
// new version and what a run from scratch with --no-cache gives. c must
// have no transient faults, and faults on document stages only where
// they run alone at their level (Options.PermanentFaultsOnly,
// LoneDocumentFaults): then every call does the same in the three runs.
func (r Runner) RunCached(ctx context.Context, c *Case, change int, dir string) Result {
	res := r.Run(ctx, c, dir)
	if len(res.Violations) > 0 {
		return res
	}
	fail := res.fail
	home, state := filepath.Join(dir, "home"), filepath.Join(dir, "state")
	before, err := ReadCalls(state)
	if err != nil {
		fail(InvHarness, "", "%v", err)
		return res
	}
	runs := runLines([]byte(res.Output))
	next := c.WithVariant(change)
	file, version, ok := r.applyNext(ctx, next, dir, home, &res)
	if !ok {
		return res
	}
	out, code := r.docpipe(ctx, "backfill", "--home", home, "--pipeline", version, "--json")
	var bf Result
	r.check(ctx, next, setup{state: state, home: home, version: version}, out, code, next.Expect, &bf)
	for _, v := range bf.Violations {
		v.Detail = "after backfill onto " + version + ": " + v.Detail
		res.Violations = append(res.Violations, v)
	}
	res.Output += "\ndocpipe backfill:\n" + bf.Output
	all, err := ReadCalls(state)
	if err != nil {
		fail(InvHarness, "", "%v", err)
		return res
	}
	backfills := runLines(out)
	r.checkReuse(ctx, next, c.Stages[change].Name, home, runs, backfills, before, all[len(before):], &res)

	scratch := filepath.Join(dir, "scratch")
	applied, code := r.docpipe(ctx, "pipeline", "apply", "--home", scratch, file)
	if code != 0 {
		fail(InvHarness, "", "pipeline apply (scratch) exits %d: %s", code, applied)
		return res
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(applied)), " ")
	sOut, _ := r.docpipe(ctx, "run", "--home", scratch, "--pipeline", first, "--no-cache", "--json", filepath.Join(dir, "docs"))
	scratchRuns := runLines(sOut)
	for _, d := range next.Docs {
		got, err := r.snapshot(ctx, next, d, home, backfills[d.Name].WorkflowID)
		if err != nil {
			fail(InvHarness, d.Name, "backfill's workflow: %v", err)
			continue
		}
		want, err := r.snapshot(ctx, next, d, scratch, scratchRuns[d.Name].WorkflowID)
		if err != nil {
			fail(InvHarness, d.Name, "run from scratch: %v", err)
			continue
		}
		if got != want {
			fail(InvCacheScratch, d.Name, "the backfill gives\n%s\na run from scratch with --no-cache gives\n%s", got, want)
		}
	}
	return res
}

// applyNext writes the next version of the case's pipeline file in place
// and applies it.
func (r Runner) applyNext(ctx context.Context, next *Case, dir, home string, res *Result) (file, version string, ok bool) {
	file = filepath.Join(dir, "pipeline.yaml")
	body := next.PipelineYAML(r.Endpoints, filepath.Join(dir, "plan.json"))
	res.Pipeline += "\nnext version:\n" + body
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		res.fail(InvHarness, "", "%v", err)
		return "", "", false
	}
	out, code := r.docpipe(ctx, "pipeline", "apply", "--home", home, file)
	if code != 0 {
		res.fail(InvValid, "", "pipeline apply (next version) exits %d: %s", code, out)
		return "", "", false
	}
	version, _, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	return file, version, true
}

// runLines reads run --json (or backfill --json) lines by file name.
func runLines(out []byte) map[string]runLine {
	runs := map[string]runLine{}
	for _, line := range strings.Split(string(out), "\n") {
		var l runLine
		if json.Unmarshal([]byte(line), &l) == nil && l.File != "" {
			runs[filepath.Base(l.File)] = l
		}
	}
	return runs
}

// checkReuse compares the backfill's calls (after) and steps with the
// first run's calls (before): a call site is called again exactly when
// its stage's output changes or its first call failed, as far as the
// order of side-by-side stages allows knowing; a stage none of whose
// calls run again is reused from the first run's workflow.
func (r Runner) checkReuse(ctx context.Context, c *Case, changed, home string, first, backfilled map[string]runLine, before, after []Call, res *Result) {
	fail := res.fail
	calledBefore, failedBefore, calledAfter := map[FaultKey]bool{}, map[FaultKey]bool{}, map[FaultKey]bool{}
	for _, call := range before {
		calledBefore[call.FaultKey] = true
		if call.Fault != "" {
			failedBefore[call.FaultKey] = true
		}
	}
	for _, call := range after {
		calledAfter[call.FaultKey] = true
	}
	for _, d := range c.Docs {
		then, err := r.showOf(ctx, home, first[d.Name].WorkflowID)
		if err != nil {
			fail(InvHarness, d.Name, "%v", err)
			continue
		}
		now, err := r.showOf(ctx, home, backfilled[d.Name].WorkflowID)
		if err != nil {
			fail(InvHarness, d.Name, "%v", err)
			continue
		}
		from := first[d.Name].WorkflowID
		for _, st := range c.Stages {
			changes := c.keyChanges(st, changed)
			if changes {
				none, sure := c.answeredNone(d, st, changed, calledBefore, failedBefore)
				if !sure {
					continue // whether it reads an answer is a matter of timing
				}
				changes = !none
			}
			runsAgain, unsure, answered := false, false, false
			for _, b := range c.batches(st, d) {
				for _, seg := range b {
					k := FaultKey{Doc: d.Name, Stage: st.Name, Segment: seg}
					// A segment a stage beside st fails may or may not reach st.
					uncertain := st.Scope == ScopeSegment && c.mayRun(d, st, seg) && !c.certainlyRuns(d, st, seg)
					unsure = unsure || uncertain && !calledBefore[k]
					again := calledBefore[k] && (changes || failedBefore[k])
					runsAgain = runsAgain || again
					answered = answered || calledBefore[k] && !failedBefore[k]
					switch {
					case st.Kind == KindBuiltin:
					case again && !calledAfter[k] && !uncertain:
						fail(InvCacheRerun, d.Name, "%s was not called again: %s", k, whyAgain(changes, changed))
					case calledAfter[k] && !again && !(uncertain && !calledBefore[k]):
						fail(InvCacheReuse, d.Name, "%s was called again, though its inputs are unchanged and its first call answered", k)
					}
				}
			}
			s := then.step(st.Name)
			completed := s != nil && s.Status == "completed"
			answered = answered && completed
			if st.Kind == KindBuiltin {
				// Builtins call no fake: their steps say what ran.
				runsAgain = changes
				answered = completed && (st.Scope == ScopeDocument || s.SegmentsRun > 0)
			}
			step := now.step(st.Name)
			if step == nil || keyedByWhatTheyRead[st.Name] || !st.Runs() {
				continue
			}
			reused := step.Status == "completed" && step.ReusedFrom != ""
			switch {
			case runsAgain && reused:
				fail(InvCacheRerun, d.Name, "stage %s is reused from %s, but %s", st.Name, step.ReusedFrom, whyAgain(changes, changed))
			case !runsAgain && !unsure && answered && (!reused || step.ReusedFrom != from):
				fail(InvCacheReuse, d.Name, "stage %s is %s (reused from %q), want reused from %s, the workflow it supersedes", st.Name, step.Status, step.ReusedFrom, from)
			}
		}
	}
}

// showOf reads show --json of workflow wf.
func (r Runner) showOf(ctx context.Context, home, wf string) (showJSON, error) {
	var show showJSON
	raw, err := r.jsonOf(ctx, "show", "--home", home, wf, "--json")
	if err != nil {
		return show, err
	}
	if err := json.Unmarshal(raw, &show); err != nil {
		return show, fmt.Errorf("show --json: %w", err)
	}
	return show, nil
}

func whyAgain(changes bool, changed string) string {
	if changes {
		return "its key changes with " + changed + "'s settings"
	}
	return "its first call failed"
}

// snapshot is what a workflow's results come to, in a form to compare
// across workflows: its outcome, each segment's status, and what each
// user's stage answered. Where side-by-side stages make it a matter of
// timing, it leaves out which stage a failed segment names and what a
// stage did with a segment another one failed.
func (r Runner) snapshot(ctx context.Context, c *Case, d Doc, home, wf string) (string, error) {
	show, err := r.showOf(ctx, home, wf)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  outcome %s, %d segments, %d failed\n", show.Workflow.Status, len(show.Segments), show.Progress.SegmentsFailed)
	for _, s := range show.Segments {
		by, _, _ := strings.Cut(s.Error, ":")
		if len(c.minimalFailers(d, s.Index)) > 1 {
			by = "(one of " + strings.Join(c.minimalFailers(d, s.Index), ", ") + ")"
		}
		fmt.Fprintf(&b, "  segment %d %s %s\n", s.Index, s.Status, by)
	}
	for _, st := range c.Stages {
		step := show.step(st.Name)
		if st.Kind == KindBuiltin || step == nil || step.Status != "completed" {
			continue
		}
		out, code := r.docpipe(ctx, "show", "--home", home, "--stage", st.Name, wf)
		if code != 0 {
			return "", fmt.Errorf("show --stage %s exits %d: %s", st.Name, code, out)
		}
		lines := parseStageLines(out)
		idx := make([]int, 0, len(lines))
		for i := range lines {
			if st.Scope == ScopeDocument || c.certainlyRuns(d, st, i) {
				idx = append(idx, i)
			}
		}
		slices.Sort(idx)
		for _, i := range idx {
			l := lines[i]
			if l.Error != "" {
				by, _, _ := strings.Cut(l.Error, ":")
				fmt.Fprintf(&b, "  %s[%d] error %s\n", st.Name, i, by)
				continue
			}
			var v any
			_ = json.Unmarshal(l.Output, &v)
			fmt.Fprintf(&b, "  %s[%d] %v\n", st.Name, i, v)
		}
	}
	return b.String(), nil
}
