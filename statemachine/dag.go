package statemachine

import (
	"fmt"
	"slices"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/statemachine/asl"
)

// A pipeline's stages form a DAG (each stage names the stages it needs).
// The generator lays it out in three phases:
//
//	document stages before the fan-out  (everything no segment stage precedes)
//	the fan-out: one Distributed Map    (every segment stage, once per batch)
//	document stages after the fan-out   (everything a segment stage precedes)
//
// Within a phase, stages are grouped into levels: a stage's level is one
// more than the highest level among the stages it needs. A level of one
// stage is a plain state; a level of several is a Parallel state with a
// branch per stage, which joins (fans in) before the next level starts. So
// stages with no path between them on the same level run concurrently, and
// no stage starts before everything it needs has finished.
//
// A stage with a `when` condition becomes a Choice on the document's
// attributes (format, language, pages), which format_parser returns under
// $.doc: a match runs the stage, anything else runs the same task with
// "skip": true, which records the stage as skipped with the reason.

// docAttrsField is where format_parser's result (the document's attributes)
// is kept in the execution's data when some stage has a `when`.
const docAttrsField = "doc"

// Names of generated states. They hold a space, which stage names cannot,
// so they never collide with a stage.
func whenStateName(stage string) string { return "when " + stage }
func skipStateName(stage string) string { return "skip " + stage }
func parallelStateName(first string, n int) string {
	return fmt.Sprintf("parallel %s +%d", first, n-1)
}

// block is a piece of the machine with one entry state and the states whose
// Next is the piece that follows.
type block struct {
	start  string
	states []namedState
	exits  []asl.State
}

// chain adds blocks in order, each continuing to the following one and the
// last to next; an empty next makes the last block end its machine.
func chain(states *asl.States, next string, blocks ...block) {
	for i, b := range blocks {
		to := next
		if i+1 < len(blocks) {
			to = blocks[i+1].start
		}
		for _, st := range b.exits {
			link(st, to)
		}
		for _, s := range b.states {
			states.Add(s.name, s.state)
		}
	}
}

// single makes a block of one state.
func single(name string, st asl.State) block {
	return block{start: name, states: []namedState{{name, st}}, exits: []asl.State{st}}
}

// stages lays out every stage of the definition, followed by nothing: the
// caller chains finalize after it.
func (g generator) stages() ([]block, error) {
	if _, err := g.def.TopoOrder(); err != nil {
		return nil, fmt.Errorf("statemachine: %w", err)
	}
	var pre, seg, post []pipeline.Stage
	for _, st := range g.def.Stages {
		switch {
		case st.Scope == pipeline.ScopeSegment:
			seg = append(seg, st)
		case st.Scope != pipeline.ScopeDocument:
			return nil, fmt.Errorf("statemachine: stage %q has unknown scope %q", st.Name, st.Scope)
		case g.afterFanOut(st):
			post = append(post, st)
		default:
			pre = append(pre, st)
		}
	}
	for _, st := range seg {
		for _, a := range g.def.Ancestors(st.Name) {
			if s, _ := g.def.Stage(a); s.Scope == pipeline.ScopeDocument && g.afterFanOut(s) {
				return nil, fmt.Errorf("statemachine: segment stage %q needs %q, which runs after the segment fan-out", st.Name, a)
			}
		}
	}
	if g.usesDocAttrs() {
		if st, ok := g.def.Stage(pipeline.StepFormatParser); !ok || st.Run.Builtin != pipeline.StepFormatParser {
			return nil, fmt.Errorf("statemachine: %q conditions need the built-in %s, which returns the document's attributes", "when", pipeline.StepFormatParser)
		}
	}

	blocks := g.levels(pre, false)
	if len(seg) > 0 {
		m := g.distributedMap(g.levels(seg, true)...)
		blocks = append(blocks, single(StateSegmentBatches, m))
	}
	blocks = append(blocks, g.levels(post, false)...)
	if len(blocks) == 0 {
		return nil, fmt.Errorf("statemachine: pipeline %q has no stages", g.def.Name)
	}
	return blocks, nil
}

// afterFanOut reports whether a segment stage precedes st.
func (g generator) afterFanOut(st pipeline.Stage) bool {
	return slices.ContainsFunc(g.def.Ancestors(st.Name), func(a string) bool {
		s, _ := g.def.Stage(a)
		return s.Scope == pipeline.ScopeSegment
	})
}

// usesDocAttrs reports whether any stage has a `when` condition, which
// needs the document's attributes in the execution's data.
func (g generator) usesDocAttrs() bool {
	return slices.ContainsFunc(g.def.Stages, func(st pipeline.Stage) bool { return st.When != nil })
}

// levels lays out one phase's stages (given in definition order) as a
// sequence of levels.
func (g generator) levels(stages []pipeline.Stage, inBatch bool) []block {
	if len(stages) == 0 {
		return nil
	}
	in := map[string]bool{}
	for _, st := range stages {
		in[st.Name] = true
	}
	level := map[string]int{}
	var byLevel [][]pipeline.Stage
	// Definition order is not topological in general: repeat until every
	// stage has a level (the DAG has no cycle, so this ends).
	for len(level) < len(stages) {
		for _, st := range stages {
			if _, ok := level[st.Name]; ok {
				continue
			}
			l, ready := 0, true
			for _, n := range st.Needs {
				if !in[n] {
					continue
				}
				nl, ok := level[n]
				if !ok {
					ready = false
					break
				}
				l = max(l, nl+1)
			}
			if !ready {
				continue
			}
			level[st.Name] = l
			for len(byLevel) <= l {
				byLevel = append(byLevel, nil)
			}
			byLevel[l] = append(byLevel[l], st)
		}
	}
	var blocks []block
	defer func() {
		if inBatch {
			// A child execution's output is gathered by the Map before its
			// own ResultPath drops it; an empty output keeps 30,000 pages
			// far from the payload limit. Only the batch's last states
			// drop it: earlier ones pass the batch on to the next stage.
			for _, st := range blocks[len(blocks)-1].exits {
				discardOutput(st)
			}
		}
	}()
	for _, group := range byLevel {
		if len(group) == 1 {
			blocks = append(blocks, g.stageBlock(group[0], inBatch, inBatch))
			continue
		}
		p := &asl.Parallel{ResultPath: asl.NullReferencePath()}
		if !inBatch {
			p.Catch = g.catchAll()
		}
		for _, st := range group {
			b := g.stageBlock(st, inBatch, true)
			branch := &asl.Machine{StartAt: b.start}
			chain(&branch.States, "", b)
			p.Branches = append(p.Branches, branch)
		}
		blocks = append(blocks, single(parallelStateName(group[0].Name, len(group)), p))
	}
	return blocks
}

// discardOutput makes st end with an empty output.
func discardOutput(st asl.State) {
	switch s := st.(type) {
	case *asl.Task:
		s.OutputPath = asl.NullPath()
	case *asl.Parallel:
		s.OutputPath = asl.NullPath()
	default:
		panic(fmt.Sprintf("statemachine: a %s state cannot end a batch", st.StateType()))
	}
}

// maxBatchTaskSeconds caps the timeout of a batch task of a user's stage.
const maxBatchTaskSeconds = 24 * 60 * 60

// userStageMarginSeconds lets a user's stage reach its own timeout before
// the task's: stagerun stops the program (SIGTERM, then SIGKILL after its
// grace) and reports a transient timeout that names the stage, which the
// task's States.Timeout would not.
const userStageMarginSeconds = 10

// taskTimeout is the TimeoutSeconds of a stage's task. A user's segment
// stage runs once per segment, each run bounded by the stage's timeout
// (stagerun enforces it), so its batch task may take that long for every
// segment of a full batch, run one after another; builtins' timeouts
// already bound a whole batch.
func (g generator) taskTimeout(st pipeline.Stage, inBatch bool) int {
	t := st.TimeoutSeconds
	if t <= 0 || st.Run.Kind() == pipeline.RunBuiltin {
		return t
	}
	if inBatch {
		t *= max(1, g.def.BatchSize)
	}
	return min(t+userStageMarginSeconds, maxBatchTaskSeconds)
}

// stageBlock is one stage's task, behind a Choice when it has a `when`.
// Inside a Parallel branch or a batch the enclosing Parallel or Map catches
// failures (enclosed), so only top-level tasks carry their own Catch.
func (g generator) stageBlock(st pipeline.Stage, inBatch, enclosed bool) block {
	payload := stagePayload(st)
	if inBatch {
		payload.Fields = append(payload.Fields, asl.DynamicField("batch", "$.batch"))
	}
	t := g.stageTask(st, payload, g.taskTimeout(st, inBatch))
	if st.Run.Kind() == pipeline.RunReview {
		g.awaitReview(t, payload)
	}
	if !enclosed {
		t.Catch = g.catchAll()
	}
	if st.Run.Builtin == pipeline.StepFormatParser && g.usesDocAttrs() {
		g.keepDocAttrs(t)
	}
	if st.When == nil {
		return single(st.Name, t)
	}
	skipPayload := stagePayload(st)
	skipPayload.Fields = append(skipPayload.Fields, asl.Field("skip", true))
	if inBatch {
		skipPayload.Fields = append(skipPayload.Fields, asl.DynamicField("batch", "$.batch"))
	}
	skip := g.stageTask(st, skipPayload, bookkeepingTimeoutSeconds)
	if !enclosed {
		skip.Catch = g.catchAll()
	}
	choice := &asl.Choice{
		Choices: []*asl.ChoiceRule{whenRule(st.When, st.Name)},
		Default: skipStateName(st.Name),
	}
	return block{
		start:  whenStateName(st.Name),
		states: []namedState{{whenStateName(st.Name), choice}, {st.Name, t}, {skipStateName(st.Name), skip}},
		exits:  []asl.State{t, skip},
	}
}

// keepDocAttrs makes format_parser's task keep the document's attributes,
// which its handler returns under "doc", at $.doc for the Choices.
func (g generator) keepDocAttrs(t *asl.Task) {
	root := "$." + docAttrsField
	if g.mode == ModeLambda {
		root = "$.Payload." + docAttrsField // lambda:invoke wraps the function's result
	}
	t.ResultSelector = asl.Object(
		asl.DynamicField("format", root+".format"),
		asl.DynamicField("language", root+".language"),
		asl.DynamicField("pages", root+".pages"),
	)
	t.ResultPath = asl.ReferencePathOf("$." + docAttrsField)
}

// whenRule compiles a stage's condition into a Choice rule on $.doc: every
// condition given must hold; a list matches any of its values.
func whenRule(w *pipeline.When, next string) *asl.ChoiceRule {
	var all []*asl.ChoiceRule
	anyOf := func(field string, values []string) {
		var or []*asl.ChoiceRule
		for _, v := range values {
			or = append(or, compare(field, "StringEquals", v))
		}
		if len(or) == 1 {
			all = append(all, or[0])
		} else {
			all = append(all, &asl.ChoiceRule{Or: or})
		}
	}
	if len(w.Format) > 0 {
		anyOf("format", pipeline.ExpandFormats(w.Format))
	}
	if len(w.Language) > 0 {
		anyOf("language", w.Language)
	}
	if p := w.Pages; p != nil {
		if p.Min > 0 {
			all = append(all, compare("pages", "NumericGreaterThanEquals", float64(p.Min)))
		}
		if p.Max > 0 {
			all = append(all, compare("pages", "NumericLessThanEquals", float64(p.Max)))
		}
	}
	rule := &asl.ChoiceRule{And: all}
	if len(all) == 1 {
		rule = all[0]
	}
	rule.Next = next
	return rule
}

func compare(field, op string, v any) *asl.ChoiceRule {
	p := asl.NewReferencePath("$." + docAttrsField + "." + field)
	return &asl.ChoiceRule{Variable: &p, Operator: op, Value: v}
}

// stageTask is a stage's Task state. In local mode its resource names the
// handler that runs it, so the embedded engine dispatches without reading
// the payload.
func (g generator) stageTask(st pipeline.Stage, payload *asl.Template, timeout int) *asl.Task {
	t := g.task(st.Name, payload, st.Retry, st.Retryable, timeout)
	if g.mode == ModeLocal {
		t.Resource = LocalResource(pipeline.HandlerFor(st))
	}
	return t
}

// stagePayload is a stage task's input: its step name and the workflow,
// plus the handler that runs it when that is not the step's own name (a
// builtin under another name, or a user's command, HTTP or Lambda stage).
func stagePayload(st pipeline.Stage) *asl.Template {
	h := pipeline.HandlerFor(st)
	if h == st.Name {
		return stepPayload(st.Name)
	}
	return stepPayload(st.Name, asl.Field("handler", h))
}
