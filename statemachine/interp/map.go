package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/docpipe/docpipe/statemachine/asl"
)

// mapSpec is a compiled Map state.
type mapSpec struct {
	processor   *machine
	distributed bool
	itemsPath   *asl.Path // nil means "$"
	selector    tmpl      // ItemSelector or legacy Parameters
	concurrency int       // 0: engine default
	concPath    *asl.Path
	label       string

	reader       bool
	readerParams tmpl
	maxItems     int
	maxItemsPath *asl.Path

	toleratedPct     *float64
	toleratedPctPath *asl.Path
	toleratedCount   *int
	toleratedCntPath *asl.Path
}

func compileMapSpec(name string, s *asl.Map) (*mapSpec, error) {
	proc, err := compileMachine(s.Processor())
	if err != nil {
		return nil, err
	}
	m := &mapSpec{
		processor:        proc,
		distributed:      s.Distributed(),
		selector:         compileTemplate(s.Selector()),
		concPath:         refPath(s.MaxConcurrencyPath),
		label:            s.Label,
		toleratedPct:     s.ToleratedFailurePercentage,
		toleratedPctPath: refPath(s.ToleratedFailurePercentagePath),
		toleratedCount:   s.ToleratedFailureCount,
		toleratedCntPath: refPath(s.ToleratedFailureCountPath),
	}
	if m.label == "" {
		m.label = name
	}
	if s.ItemsPath != nil && !s.ItemsPath.IsRoot() {
		m.itemsPath = &s.ItemsPath.Path
	}
	if s.MaxConcurrency != nil {
		m.concurrency = *s.MaxConcurrency
	}
	if r := s.ItemReader; r != nil {
		m.reader = true
		m.readerParams = compileTemplate(r.Parameters)
		if r.ReaderConfig != nil {
			if r.ReaderConfig.MaxItems != nil {
				m.maxItems = *r.ReaderConfig.MaxItems
			}
			m.maxItemsPath = refPath(r.ReaderConfig.MaxItemsPath)
		}
	}
	return m, nil
}

// runMap runs the Map state's iterations. Output is the iteration outputs
// in item order.
func (n *node) runMap(ctx context.Context, env *evalEnv, in any) (any, *failure) {
	m := n.mp
	ex := env.ex
	items, f := m.items(ctx, env, in)
	if f != nil {
		return nil, f
	}
	limit := ex.eng.maxConc
	conc := m.concurrency
	if m.concPath != nil {
		v, ok := env.resolve(m.concPath, in)
		c, isNum := v.(float64)
		if !ok || !isNum || c < 0 || c != math.Trunc(c) {
			return nil, runtimeFailure("Invalid path '%s': MaxConcurrencyPath must select a non-negative integer", m.concPath.Raw)
		}
		conc = int(c)
	}
	if conc > 0 {
		limit = conc
	}
	if m.distributed {
		return n.mapRun(ctx, env, in, items, limit)
	}

	ex.emit(Event{Type: MapStateStarted, State: n.name, StateType: n.kind})
	results := make([]any, len(items))
	err := forEach(ctx, len(items), limit, func(ctx context.Context, i int) error {
		itemIn, f := m.itemInput(env, in, items, i)
		if f != nil {
			return failErr{f}
		}
		ex.record(Event{Type: MapIterationStarted, State: n.name, StateType: n.kind, Index: i})
		out, f := m.processor.run(ctx, ex, itemIn)
		if f != nil {
			if !f.aborted {
				ex.record(Event{Type: MapIterationFailed, State: n.name, StateType: n.kind, Index: i, Error: f.name, Cause: f.cause})
			}
			return failErr{f}
		}
		ex.record(Event{Type: MapIterationSucceeded, State: n.name, StateType: n.kind, Index: i})
		results[i] = out
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, abortFailure(ctx)
		}
		f := *asFailure(ctx, err)
		f.branch = true
		ex.emit(Event{Type: MapStateFailed, State: n.name, StateType: n.kind, Error: f.name, Cause: f.cause})
		return nil, &f
	}
	ex.emit(Event{Type: MapStateSucceeded, State: n.name, StateType: n.kind})
	return results, nil
}

// itemInput evaluates ItemSelector for item i, with $$.Map.Item in scope.
func (m *mapSpec) itemInput(env *evalEnv, in any, items []any, i int) (any, *failure) {
	if m.selector == nil {
		return items[i], nil
	}
	ienv := &evalEnv{ex: env.ex, state: env.state, entered: env.entered, retry: env.retry, item: &mapItem{index: i, value: items[i]}}
	return m.selector.eval(ienv, in)
}

// items reads the Map's items from ItemsPath or, with an ItemReader,
// through the engine's ItemReader.
func (m *mapSpec) items(ctx context.Context, env *evalEnv, in any) ([]any, *failure) {
	if !m.reader {
		v := in
		if m.itemsPath != nil {
			var ok bool
			if v, ok = env.resolve(m.itemsPath, in); !ok {
				return nil, runtimeFailure("Invalid path '%s': the ItemsPath could not be found in the input", m.itemsPath.Raw)
			}
		}
		a, ok := v.([]any)
		if !ok {
			return nil, runtimeFailure("Map items must be an array, got %s", typeName(v))
		}
		return a, nil
	}
	readerFail := func(format string, args ...any) *failure {
		return &failure{name: asl.ErrorItemReaderFailed, cause: fmt.Sprintf(format, args...)}
	}
	pv, f := m.readerParams.eval(env, in)
	if f != nil {
		return nil, f
	}
	params, _ := pv.(map[string]any)
	bucket, ok1 := params["Bucket"].(string)
	key, ok2 := params["Key"].(string)
	if !ok1 || !ok2 {
		return nil, readerFail("ItemReader Parameters must resolve Bucket and Key to strings")
	}
	reader := env.ex.eng.opts.ItemReader
	if reader == nil {
		return nil, readerFail("no ItemReader is configured")
	}
	b, err := reader.ReadItems(ctx, bucket, key)
	if err != nil {
		if ctx.Err() != nil {
			return nil, abortFailure(ctx)
		}
		return nil, readerFail("reading s3://%s/%s: %v", bucket, key, err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, readerFail("s3://%s/%s is not valid JSON: %v", bucket, key, err)
	}
	items, ok := doc.([]any)
	if !ok {
		return nil, readerFail("s3://%s/%s holds a JSON %s, not an array", bucket, key, typeName(doc))
	}
	max := m.maxItems
	if m.maxItemsPath != nil {
		v, ok := env.resolve(m.maxItemsPath, in)
		c, isNum := v.(float64)
		if !ok || !isNum || c < 0 || c != math.Trunc(c) {
			return nil, runtimeFailure("Invalid path '%s': MaxItemsPath must select a non-negative integer", m.maxItemsPath.Raw)
		}
		max = int(c)
	}
	if max > 0 && len(items) > max {
		items = items[:max]
	}
	return items, nil
}

// tolerance resolves the tolerated failure thresholds; with neither set,
// no failure is tolerated.
func (m *mapSpec) tolerance(env *evalEnv, in any) (pct float64, count int, f *failure) {
	pct, count = -1, -1
	if m.toleratedPct != nil {
		pct = *m.toleratedPct
	}
	if m.toleratedCount != nil {
		count = *m.toleratedCount
	}
	if m.toleratedPctPath != nil {
		v, ok := env.resolve(m.toleratedPctPath, in)
		p, isNum := v.(float64)
		if !ok || !isNum || p < 0 || p > 100 {
			return 0, 0, runtimeFailure("Invalid path '%s': ToleratedFailurePercentagePath must select a number from 0 to 100", m.toleratedPctPath.Raw)
		}
		pct = p
	}
	if m.toleratedCntPath != nil {
		v, ok := env.resolve(m.toleratedCntPath, in)
		c, isNum := v.(float64)
		if !ok || !isNum || c < 0 || c != math.Trunc(c) {
			return 0, 0, runtimeFailure("Invalid path '%s': ToleratedFailureCountPath must select a non-negative integer", m.toleratedCntPath.Raw)
		}
		count = int(c)
	}
	if pct < 0 && count < 0 {
		count = 0
	}
	return pct, count, nil
}

// mapRun runs a distributed Map: every item is a child execution with its
// own context object ($$.Execution is the child's). Failed children are
// counted against the tolerated thresholds; a tolerated failure leaves its
// {"Error","Cause"} in the output array at the item's position.
func (n *node) mapRun(ctx context.Context, env *evalEnv, in any, items []any, limit int) (any, *failure) {
	m := n.mp
	ex := env.ex
	pct, count, f := m.tolerance(env, in)
	if f != nil {
		return nil, f
	}
	runID := "arn:aws:states:local:000000000000:mapRun:" + ex.eng.smName + "/" + m.label + ":" + ex.name
	ex.emit(Event{Type: MapRunStarted, State: n.name, StateType: n.kind})
	total := len(items)
	exceeded := func(failed int) bool {
		if count >= 0 && failed > count {
			return true
		}
		return pct >= 0 && float64(failed)*100 > pct*float64(total)
	}
	results := make([]any, total)
	var failed atomic.Int64
	var firstMu sync.Mutex
	var first *failure
	err := forEach(ctx, total, limit, func(ctx context.Context, i int) error {
		itemIn, f := m.itemInput(env, in, items, i)
		child := &execution{
			eng:   ex.eng,
			id:    runID + ":" + strconv.Itoa(i),
			name:  strconv.Itoa(i),
			input: itemIn,
			start: ex.eng.clock.Now(),
			hist:  ex.hist,
			index: i,
		}
		var out any
		if f == nil {
			child.emit(Event{Type: MapIterationStarted, State: n.name, StateType: n.kind})
			out, f = m.processor.run(ctx, child, itemIn)
		}
		if f == nil {
			child.emit(Event{Type: MapIterationSucceeded, State: n.name, StateType: n.kind})
			results[i] = out
			return nil
		}
		if f.aborted {
			return failErr{f}
		}
		child.emit(Event{Type: MapIterationFailed, State: n.name, StateType: n.kind, Error: f.name, Cause: f.cause})
		results[i] = map[string]any{"Error": f.name, "Cause": f.cause}
		firstMu.Lock()
		if first == nil {
			first = f
		}
		firstFailure := first
		firstMu.Unlock()
		if exceeded(int(failed.Add(1))) {
			return failErr{&failure{name: asl.ErrorExceedToleratedFailure, cause: fmt.Sprintf(
				"The tolerated failure threshold was exceeded (first failure: %s: %s)", firstFailure.name, firstFailure.cause)}}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, abortFailure(ctx)
		}
		f := *asFailure(ctx, err)
		f.branch = true
		ex.emit(Event{Type: MapRunFailed, State: n.name, StateType: n.kind, Error: f.name, Cause: f.cause})
		return nil, &f
	}
	ex.emit(Event{Type: MapRunSucceeded, State: n.name, StateType: n.kind})
	return results, nil
}
