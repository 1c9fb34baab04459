package contract

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Runner runs cases through a docpipe binary on the embedded engine.
type Runner struct {
	Docpipe   string    // the docpipe binary
	Endpoints Endpoints // where the fake stages are
	// Env is added to docpipe's environment (the fake command stage reads
	// its switch from there).
	Env []string
}

// Violation is one broken invariant.
type Violation struct {
	Invariant string
	Doc       string
	Detail    string
}

func (v Violation) String() string {
	if v.Doc == "" {
		return fmt.Sprintf("[%s] %s", v.Invariant, v.Detail)
	}
	return fmt.Sprintf("[%s] %s: %s", v.Invariant, v.Doc, v.Detail)
}

// Invariant names, one per promise.
const (
	InvValid        = "valid-file"         // every generated file passes pipeline validate
	InvOutcome      = "outcome"            // the workflow ends as the oracle says
	InvCause        = "failure-cause"      // a failed workflow's error names what failed
	InvSegment      = "segment-status"     // a failed segment reads failed, naming its stage
	InvRunJSON      = "run-json"           // run --json's status and failed_segments
	InvStepCounts   = "step-counts"        // the progress counters and the failing stage's step
	InvExit         = "exit-status"        // 1 when anything failed, else 0
	InvStatusFailed = "status-failed"      // status --failed lists exactly the failed workflows
	InvShowStage    = "show-stage"         // show --stage holds each answer and each failure
	InvEvent        = "outcome-event"      // one outcome event that agrees
	InvRetryAudit   = "retry-audit"        // a recovered transient shows in the transitions
	InvUpstream     = "upstream-failed"    // no stage runs a segment a stage before it failed
	InvSkip         = "skip-reason"        // a skipped stage says why and runs nothing
	InvHarness      = "harness"            // the run itself could not be observed
	InvSegmentCount = "generator-segments" // a document has as many segments as sections
)

// Result is what one case did.
type Result struct {
	Pipeline   string // the pipeline file as applied
	Violations []Violation
	Output     string // docpipe run's output, for the report
	// Elapsed is how long the (first) docpipe run took.
	Elapsed time.Duration
}

// Run runs c in a fresh home under dir and checks every invariant.
func (r Runner) Run(ctx context.Context, c *Case, dir string) Result {
	var res Result
	s, ok := r.prepare(ctx, c, dir, &res)
	if !ok {
		return res
	}
	start := time.Now()
	out, code := r.docpipe(ctx, s.runArgs()...)
	res.Elapsed = time.Since(start)
	r.check(ctx, c, s, out, code, c.Expect, &res)
	return res
}

// setup is a case laid out on disk with its pipeline applied.
type setup struct {
	state, docs, home string
	version           string // name@version
}

// runArgs is the docpipe run a user types for the case.
func (s setup) runArgs() []string {
	return []string{"run", "--home", s.home, "--pipeline", s.version, "--json", s.docs}
}

func (res *Result) fail(inv, doc, format string, args ...any) {
	res.Violations = append(res.Violations, Violation{Invariant: inv, Doc: doc, Detail: fmt.Sprintf(format, args...)})
}

// prepare writes the case's documents, fault plan and pipeline file under
// dir and applies the file to a fresh home.
func (r Runner) prepare(ctx context.Context, c *Case, dir string, res *Result) (setup, bool) {
	fail := res.fail
	state := filepath.Join(dir, "state")
	docs := filepath.Join(dir, "docs")
	home := filepath.Join(dir, "home")
	for _, d := range []string{state, docs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fail(InvHarness, "", "%v", err)
			return setup{}, false
		}
	}
	planPath := filepath.Join(dir, "plan.json")
	raw, _ := json.Marshal(NewPlan(c, state))
	res.Pipeline = c.PipelineYAML(r.Endpoints, planPath)
	file := filepath.Join(dir, "pipeline.yaml")
	for path, body := range map[string]string{planPath: string(raw), file: res.Pipeline} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			fail(InvHarness, "", "%v", err)
			return setup{}, false
		}
	}
	for _, d := range c.Docs {
		if err := os.WriteFile(filepath.Join(docs, d.Name), []byte(DocText(d)), 0o644); err != nil {
			fail(InvHarness, "", "%v", err)
			return setup{}, false
		}
	}
	if out, code := r.docpipe(ctx, "pipeline", "validate", file); code != 0 {
		fail(InvValid, "", "pipeline validate exits %d: %s", code, out)
		return setup{}, false
	}
	out, code := r.docpipe(ctx, "pipeline", "apply", "--home", home, file)
	if code != 0 {
		fail(InvValid, "", "pipeline apply exits %d: %s", code, out)
		return setup{}, false
	}
	version, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return setup{state: state, docs: docs, home: home, version: version}, true
}

// check reads every surface of the finished run in s — out and runCode are
// the last docpipe run's output and exit status — and compares it with
// what expect says of each document.
func (r Runner) check(ctx context.Context, c *Case, s setup, out []byte, runCode int, expect func(Doc) Expected, res *Result) {
	fail := res.fail
	home, state := s.home, s.state
	res.Output = string(out)
	runs := map[string]runLine{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var l runLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.File != "" {
			runs[filepath.Base(l.File)] = l
		}
	}
	failedList, err := r.jsonOf(ctx, "status", "--home", home, "--failed", "--json")
	if err != nil {
		fail(InvHarness, "", "status --failed: %v", err)
		return
	}
	var failedWFs []struct {
		WorkflowID string `json:"workflow_id"`
	}
	_ = json.Unmarshal(failedList, &failedWFs)
	evRaw, err := r.jsonOf(ctx, "events", "--home", home, "--json")
	if err != nil {
		fail(InvHarness, "", "events: %v", err)
		return
	}
	var events []struct {
		Event outcomeEvent `json:"event"`
	}
	_ = json.Unmarshal(evRaw, &events)
	calls, err := ReadCalls(state)
	if err != nil {
		fail(InvHarness, "", "%v", err)
		return
	}
	checkUpstream(c, calls, fail)

	anyFailure := false
	for _, d := range c.Docs {
		want := expect(d)
		run, ok := runs[d.Name]
		if !ok {
			fail(InvRunJSON, d.Name, "run --json has no line for it")
			continue
		}
		showRaw, err := r.jsonOf(ctx, "show", "--home", home, run.WorkflowID, "--json")
		if err != nil {
			fail(InvHarness, d.Name, "show: %v", err)
			continue
		}
		var show showJSON
		if err := json.Unmarshal(showRaw, &show); err != nil {
			fail(InvHarness, d.Name, "show --json: %v", err)
			continue
		}
		status := show.Workflow.Status
		failedSegs := map[int]string{}
		for _, s := range show.Segments {
			if s.Status == "failed" {
				failedSegs[s.Index] = s.Error
			}
		}
		if status == StatusFailed || len(failedSegs) > 0 {
			anyFailure = true
		}
		if want.SegmentsKnown && len(show.Segments) != d.Sections {
			fail(InvSegmentCount, d.Name, "%d segments for %d sections", len(show.Segments), d.Sections)
			continue
		}
		// The outcome.
		if want.Status != StatusUnknown && status != want.Status {
			fail(InvOutcome, d.Name, "workflow is %s, want %s (causes %v); error %q", status, want.Status, want.Causes, show.Workflow.Error)
		}
		if want.Status == StatusFailed && status == StatusFailed && !namesOne(show.Workflow.Error, want.Causes) {
			fail(InvCause, d.Name, "workflow error %q names none of %v", show.Workflow.Error, want.Causes)
		}
		// Segments.
		if want.SegmentsKnown {
			for i := 1; i <= d.Sections; i++ {
				by, wantFailed := want.Segments[i]
				gotErr, gotFailed := failedSegs[i]
				switch {
				case wantFailed && !gotFailed:
					fail(InvSegment, d.Name, "segment %d is %s, want failed by %v", i, segStatus(show, i), by)
				case !wantFailed && gotFailed:
					fail(InvSegment, d.Name, "segment %d failed (%q), want done", i, gotErr)
				case wantFailed && !namesOne(gotErr, by):
					fail(InvSegment, d.Name, "segment %d's error %q names none of %v", i, gotErr, by)
				}
			}
			if got := show.Progress.SegmentsFailed; got != want.FailedCount() {
				fail(InvStepCounts, d.Name, "progress counts %d failed segments, want %d", got, want.FailedCount())
			}
		}
		if got := show.Progress.SegmentsFailed; got != len(failedSegs) {
			fail(InvStepCounts, d.Name, "progress counts %d failed segments, the segments say %d", got, len(failedSegs))
		}
		// The failing stage's own step counts the segments it failed.
		byStage := map[string]int{}
		for _, e := range failedSegs {
			if st, _, ok := strings.Cut(e, ":"); ok {
				byStage[st]++
			}
		}
		for st, n := range byStage {
			step := show.step(st)
			if step == nil {
				continue
			}
			if m := failedCount.FindStringSubmatch(step.Error); m != nil {
				if got, _ := strconv.Atoi(m[1]); got < n {
					fail(InvStepCounts, d.Name, "step %s says %q but failed %d segments", st, step.Error, n)
				}
			}
		}
		// run --json.
		if run.Status != status {
			fail(InvRunJSON, d.Name, "run --json says %s, the workflow is %s", run.Status, status)
		}
		if run.FailedSegments != len(failedSegs) {
			fail(InvRunJSON, d.Name, "run --json failed_segments %d, the segments say %d", run.FailedSegments, len(failedSegs))
		}
		if want.SegmentsKnown && run.FailedSegments != want.FailedCount() {
			fail(InvRunJSON, d.Name, "run --json failed_segments %d, want %d", run.FailedSegments, want.FailedCount())
		}
		// status --failed.
		listed := slices.ContainsFunc(failedWFs, func(w struct {
			WorkflowID string `json:"workflow_id"`
		}) bool {
			return w.WorkflowID == run.WorkflowID
		})
		if listed != (status == StatusFailed) {
			fail(InvStatusFailed, d.Name, "status --failed lists it: %v; the workflow is %s", listed, status)
		}
		// The outcome event.
		var mine []outcomeEvent
		for _, e := range events {
			if e.Event.WorkflowID == run.WorkflowID && strings.HasPrefix(e.Event.Type, "analysis.") {
				mine = append(mine, e.Event)
			}
		}
		switch {
		case len(mine) != 1:
			fail(InvEvent, d.Name, "%d outcome events, want 1", len(mine))
		case mine[0].Type != "analysis."+status:
			fail(InvEvent, d.Name, "event %s for a %s workflow", mine[0].Type, status)
		case mine[0].Segments.Failed != len(failedSegs):
			fail(InvEvent, d.Name, "event counts %d failed segments, the segments say %d", mine[0].Segments.Failed, len(failedSegs))
		}
		// show --stage: every failure and every answer.
		stageLines := map[string]map[int]stageLine{}
		lines := func(st string) map[int]stageLine {
			if m, ok := stageLines[st]; ok {
				return m
			}
			out, _ := r.docpipe(ctx, "show", "--home", home, "--stage", st, run.WorkflowID)
			m := parseStageLines(out)
			stageLines[st] = m
			return m
		}
		for i, e := range failedSegs {
			st, _, _ := strings.Cut(e, ":")
			if s, ok := c.Stage(st); !ok || s.Kind == KindBuiltin {
				continue
			}
			if l, ok := lines(st)[i]; !ok || l.Error == "" {
				fail(InvShowStage, d.Name, "show --stage %s has no error for segment %d (%q)", st, i, e)
			}
		}
		for _, k := range want.Succeeded {
			st, _ := c.Stage(k.Stage)
			l, ok := lines(k.Stage)[k.Segment]
			if st.Scope == ScopeDocument {
				l, ok = lines(k.Stage)[-1]
			}
			if want := AnswerVariant(k, st.Variant); !ok || !jsonEqual(l.Output, want) {
				fail(InvShowStage, d.Name, "show --stage %s segment %d: %s, want output %s", k.Stage, k.Segment, l, want)
			}
		}
		// Recovered transients leave their retries in the audit trail.
		for _, k := range want.Recovered {
			if !slices.ContainsFunc(show.Transitions, func(t transition) bool {
				return t.Step == k.Stage && strings.Contains(t.Error, "transient")
			}) {
				fail(InvRetryAudit, d.Name, "%s recovered from %s, but no transition of %s records a transient failure", k, c.Faults[k].Kind, k.Stage)
			}
		}
		// Skipped stages say why.
		if status == StatusCompleted {
			for _, name := range want.Skipped {
				step := show.step(name)
				switch {
				case step == nil:
					fail(InvSkip, d.Name, "stage %s has no step", name)
				case step.Status != "skipped":
					fail(InvSkip, d.Name, "stage %s is %s, want skipped", name, step.Status)
				case !strings.HasPrefix(step.Error, "when: ") || strings.Contains(step.Error, "did not match"):
					fail(InvSkip, d.Name, "stage %s skipped with %q, which does not say which condition failed", name, step.Error)
				}
			}
		}
	}
	for _, call := range calls {
		if st, _ := c.Stage(call.Stage); !st.Runs() {
			fail(InvSkip, call.Doc, "stage %s was called, but its condition does not match", call.Stage)
		}
	}
	wantCode := 0
	if anyFailure {
		wantCode = 1
	}
	if runCode != wantCode {
		fail(InvExit, "", "docpipe run exits %d, want %d", runCode, wantCode)
	}
}

var failedCount = regexp.MustCompile(`(\d+) failed`)

// checkUpstream: a call that failed a segment for good is the last call of
// that segment by any stage after it.
func checkUpstream(c *Case, calls []Call, fail func(inv, doc, format string, args ...any)) {
	for _, bad := range calls {
		if bad.Fault == "" || bad.Fault.Transient() || bad.Segment == 0 {
			continue
		}
		for _, later := range calls {
			if later.Doc == bad.Doc && later.Segment == bad.Segment && c.Ancestors(later.Stage)[bad.Stage] {
				fail(InvUpstream, bad.Doc, "stage %s ran segment %d, which %s before it failed (%s)", later.Stage, later.Segment, bad.Stage, bad.Fault)
			}
		}
	}
}

func namesOne(msg string, causes []string) bool {
	for _, c := range causes {
		if c == AllSegmentsFailed && strings.Contains(msg, "segments failed") || strings.Contains(msg, c+":") {
			return true
		}
	}
	return false
}

func segStatus(s showJSON, i int) string {
	for _, seg := range s.Segments {
		if seg.Index == i {
			return seg.Status
		}
	}
	return "missing"
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// docpipe runs the binary and returns its stdout and exit status (-1 when
// it could not run).
func (r Runner) docpipe(ctx context.Context, args ...string) ([]byte, int) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Docpipe, args...)
	cmd.Env = r.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return append(out, stderr.Bytes()...), exit.ExitCode()
	case err != nil:
		return []byte(err.Error()), -1
	}
	return out, 0
}

// env is docpipe's environment: the test's, plus r.Env.
func (r Runner) env() []string { return append(os.Environ(), r.Env...) }

func (r Runner) jsonOf(ctx context.Context, args ...string) ([]byte, error) {
	out, code := r.docpipe(ctx, args...)
	if code != 0 {
		return nil, fmt.Errorf("docpipe %s exits %d: %s", strings.Join(args, " "), code, out)
	}
	return out, nil
}

type runLine struct {
	File           string `json:"file"`
	WorkflowID     string `json:"workflow_id"`
	Status         string `json:"status"`
	FailedSegments int    `json:"failed_segments"`
	Error          string `json:"error"`
}

type outcomeEvent struct {
	Type       string `json:"type"`
	WorkflowID string `json:"workflow_id"`
	Segments   struct {
		Failed int `json:"failed"`
	} `json:"segments"`
}

type transition struct {
	Step  string `json:"step"`
	From  string `json:"from"`
	To    string `json:"to"`
	Error string `json:"error"`
}

type showJSON struct {
	Workflow struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"workflow"`
	Progress struct {
		SegmentsFailed int `json:"segments_failed"`
	} `json:"progress"`
	Steps       []stepJSON   `json:"steps"`
	Transitions []transition `json:"transitions"`
	Segments    []struct {
		Index  int    `json:"index"`
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"segments"`
}

type stepJSON struct {
	Name           string `json:"name"`
	Status         string `json:"status"`
	Error          string `json:"error"`
	ReusedFrom     string `json:"reused_from"`
	SegmentsReused int    `json:"segments_reused"`
	SegmentsRun    int    `json:"segments_run"`
}

func (s showJSON) step(name string) *stepJSON {
	for i := range s.Steps {
		if s.Steps[i].Name == name {
			return &s.Steps[i]
		}
	}
	return nil
}

// stageLine is a line of show --stage; a document stage's one JSON answer
// is kept under index -1.
type stageLine struct {
	Index  *int            `json:"index"`
	Output json.RawMessage `json:"output"`
	Error  string          `json:"error"`
}

func (l stageLine) String() string {
	if l.Error != "" {
		return "error " + strconv.Quote(l.Error)
	}
	if l.Output == nil {
		return "nothing"
	}
	return string(l.Output)
}

func parseStageLines(out []byte) map[int]stageLine {
	m := map[int]stageLine{}
	trimmed := bytes.TrimSpace(out)
	sc := bufio.NewScanner(bytes.NewReader(trimmed))
	sc.Buffer(nil, 1<<20)
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, slices.Clone(sc.Bytes()))
	}
	for _, raw := range lines {
		var l stageLine
		if json.Unmarshal(raw, &l) == nil && l.Index != nil && (l.Output != nil || l.Error != "") {
			m[*l.Index] = l
		}
	}
	if len(m) == 0 && json.Valid(trimmed) {
		m[-1] = stageLine{Output: json.RawMessage(trimmed)}
	}
	return m
}
