package interp

import (
	"fmt"
	"time"

	"github.com/docpipe/docpipe/statemachine/asl"
)

// failure is a state-level error travelling up to Retry/Catch and the
// execution. aborted marks a cancelled context: never retried or caught.
type failure struct {
	name    string
	cause   string
	branch  bool // raised inside a Parallel branch or Map iteration
	aborted bool
}

func runtimeFailure(format string, args ...any) *failure {
	return &failure{name: asl.ErrorRuntime, cause: fmt.Sprintf(format, args...)}
}

// timeFormat is how the context object renders times.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// evalEnv is what paths and templates may read besides the state's data.
type evalEnv struct {
	ex      *execution
	state   string
	entered time.Time
	retry   int
	token   string
	item    *mapItem
	ctxObj  map[string]any
}

type mapItem struct {
	index int
	value any
}

// contextObject builds the whole of $$; paths that name a part of it build
// only that part (see contextField).
func (e *evalEnv) contextObject() map[string]any {
	if e.ctxObj != nil {
		return e.ctxObj
	}
	c := map[string]any{}
	for _, k := range []string{"Execution", "State", "StateMachine", "Task", "Map"} {
		if v, ok := e.contextField(k); ok {
			c[k] = v
		}
	}
	e.ctxObj = c
	return c
}

// contextField builds one top-level member of the context object.
func (e *evalEnv) contextField(name string) (any, bool) {
	ex := e.ex
	switch name {
	case "Execution":
		return ex.contextExecution(), true
	case "State":
		return map[string]any{
			"Name":        e.state,
			"EnteredTime": e.entered.UTC().Format(timeFormat),
			"RetryCount":  float64(e.retry),
		}, true
	case "StateMachine":
		return ex.eng.ctxStateMachine, true
	case "Task":
		if e.token != "" {
			return map[string]any{"Token": e.token}, true
		}
	case "Map":
		if e.item != nil {
			return map[string]any{"Item": map[string]any{"Index": float64(e.item.index), "Value": e.item.value}}, true
		}
	}
	return nil, false
}

// contextExecution is $$.Execution, built once per execution.
func (ex *execution) contextExecution() map[string]any {
	ex.ctxOnce.Do(func() {
		ex.ctxExec = map[string]any{
			"Id":        ex.id,
			"Name":      ex.name,
			"Input":     ex.input,
			"StartTime": ex.start.UTC().Format(timeFormat),
			"RoleArn":   "arn:aws:iam::000000000000:role/local",
		}
	})
	return ex.ctxExec
}

// resolve evaluates p against data or, for $$ paths, the context object.
func (e *evalEnv) resolve(p *asl.Path, data any) (any, bool) {
	if !p.Context {
		return getPath(p, data)
	}
	if len(p.Steps) == 0 || p.Steps[0].Kind != asl.StepField || !p.IsReference() {
		return getPath(p, e.contextObject())
	}
	steps := p.Steps
	if e.item != nil && len(steps) == 3 && steps[0].Field == "Map" && steps[1].Kind == asl.StepField && steps[1].Field == "Item" && steps[2].Kind == asl.StepField {
		// $$.Map.Item.Value / .Index, read once per item: skip building maps.
		switch steps[2].Field {
		case "Value":
			return e.item.value, true
		case "Index":
			return float64(e.item.index), true
		}
	}
	v, ok := e.contextField(steps[0].Field)
	if !ok {
		return nil, false
	}
	for _, s := range p.Steps[1:] {
		if v, ok = step(s, v); !ok {
			return nil, false
		}
	}
	return v, true
}

// getPath returns the node p selects. A path with wildcards returns the
// array of every match, as JSONPath does.
func getPath(p *asl.Path, v any) (any, bool) {
	if p.IsReference() {
		for _, s := range p.Steps {
			var ok bool
			if v, ok = step(s, v); !ok {
				return nil, false
			}
		}
		return v, true
	}
	out := []any{}
	collect(p.Steps, v, &out)
	return out, true
}

func step(s asl.Step, v any) (any, bool) {
	switch s.Kind {
	case asl.StepField:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		r, ok := m[s.Field]
		return r, ok
	case asl.StepIndex:
		a, ok := v.([]any)
		if !ok || s.Index >= len(a) {
			return nil, false
		}
		return a[s.Index], true
	}
	return nil, false
}

func collect(steps []asl.Step, v any, out *[]any) {
	if len(steps) == 0 {
		*out = append(*out, v)
		return
	}
	s := steps[0]
	if s.Kind != asl.StepWildcard {
		if n, ok := step(s, v); ok {
			collect(steps[1:], n, out)
		}
		return
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			collect(steps[1:], e, out)
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			collect(steps[1:], x[k], out)
		}
	}
}

// setPath returns a copy of root with val placed at steps, creating missing
// objects on the way. Objects along the path are copied, never modified.
func setPath(root any, steps []asl.Step, val any) (any, error) {
	if len(steps) == 0 {
		return val, nil
	}
	s := steps[0]
	switch s.Kind {
	case asl.StepField:
		var m map[string]any
		switch x := root.(type) {
		case map[string]any:
			m = make(map[string]any, len(x)+1)
			for k, v := range x {
				m[k] = v
			}
		case nil:
			m = make(map[string]any, 1)
		default:
			return nil, fmt.Errorf("cannot set field %q on a %s", s.Field, typeName(root))
		}
		child, err := setPath(m[s.Field], steps[1:], val)
		if err != nil {
			return nil, err
		}
		m[s.Field] = child
		return m, nil
	case asl.StepIndex:
		a, ok := root.([]any)
		if !ok || s.Index >= len(a) {
			return nil, fmt.Errorf("cannot set index %d on a %s", s.Index, typeName(root))
		}
		c := append([]any(nil), a...)
		child, err := setPath(c[s.Index], steps[1:], val)
		if err != nil {
			return nil, err
		}
		c[s.Index] = child
		return c, nil
	}
	return nil, fmt.Errorf("wildcards are not allowed in a reference path")
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

// optPath is a compiled InputPath/OutputPath: nil p means "$".
type optPath struct {
	null bool
	p    *asl.Path
}

func compileOptPath(np asl.NullablePath) optPath {
	switch {
	case np.Null:
		return optPath{null: true}
	case !np.Set || np.Path.IsRoot():
		return optPath{}
	}
	return optPath{p: &np.Path}
}

// apply implements InputPath/OutputPath: null yields {}.
func (o optPath) apply(env *evalEnv, v any, field string) (any, *failure) {
	if o.null {
		return map[string]any{}, nil
	}
	if o.p == nil {
		return v, nil
	}
	r, ok := env.resolve(o.p, v)
	if !ok {
		return nil, runtimeFailure("Invalid path '%s': the %s path could not be found in the state's data", o.p.Raw, field)
	}
	return r, nil
}

// resultPath is a compiled ResultPath: discard (null), replace ($) or set.
type resultPath struct {
	discard bool
	p       *asl.Path // nil means "$"
}

func compileResultPath(np asl.NullableReferencePath) resultPath {
	switch {
	case np.Null:
		return resultPath{discard: true}
	case !np.Set || np.Path.IsRoot():
		return resultPath{}
	}
	return resultPath{p: &np.Path.Path}
}

func (r resultPath) apply(input, result any) (any, *failure) {
	if r.discard {
		return input, nil
	}
	if r.p == nil {
		return result, nil
	}
	out, err := setPath(input, r.p.Steps, result)
	if err != nil {
		return nil, runtimeFailure("Invalid path '%s': unable to apply ResultPath to the state input: %v", r.p.Raw, err)
	}
	return out, nil
}

// refPath returns an optional reference path's parsed form, or nil.
func refPath(p *asl.ReferencePath) *asl.Path {
	if p == nil {
		return nil
	}
	return &p.Path
}

// tmpl is a compiled payload template (Parameters, ItemSelector,
// ResultSelector, ItemReader Parameters).
type tmpl interface {
	eval(env *evalEnv, data any) (any, *failure)
}

type tConst struct{ v any }

func (t tConst) eval(*evalEnv, any) (any, *failure) { return t.v, nil }

type tObj struct {
	keys []string
	vals []tmpl
}

func (t *tObj) eval(env *evalEnv, data any) (any, *failure) {
	m := make(map[string]any, len(t.keys))
	for i, k := range t.keys {
		v, f := t.vals[i].eval(env, data)
		if f != nil {
			return nil, f
		}
		m[k] = v
	}
	return m, nil
}

type tArr struct{ elems []tmpl }

func (t *tArr) eval(env *evalEnv, data any) (any, *failure) {
	a := make([]any, len(t.elems))
	for i, e := range t.elems {
		v, f := e.eval(env, data)
		if f != nil {
			return nil, f
		}
		a[i] = v
	}
	return a, nil
}

type tPath struct {
	field string
	p     *asl.Path
}

func (t *tPath) eval(env *evalEnv, data any) (any, *failure) {
	v, ok := env.resolve(t.p, data)
	if !ok {
		return nil, runtimeFailure("The JsonPath argument for the field '%s' could not be found in the input", t.field)
	}
	return v, nil
}

type tCall struct {
	field string
	call  *asl.Intrinsic
}

func (t *tCall) eval(env *evalEnv, data any) (any, *failure) {
	v, f := evalIntrinsic(env, t.call, data)
	if f != nil && f.name == asl.ErrorIntrinsicFailure {
		f.cause = fmt.Sprintf("The function %q for the field '%s' failed: %s", t.call.Name, t.field, f.cause)
	}
	return v, f
}

// compileExpr compiles a path or intrinsic call; field names it in
// failure messages.
func compileExpr(field string, e *asl.Expr) tmpl {
	if e.Call != nil {
		return &tCall{field: field, call: e.Call}
	}
	return &tPath{field: field, p: e.Path}
}

// compileTemplate compiles a parsed template, folding subtrees without
// expressions into constants built once. A nil template compiles to nil.
func compileTemplate(t *asl.Template) tmpl {
	if t == nil {
		return nil
	}
	return compileValue("", t)
}

// compileValue compiles t, the value of the field named field.
func compileValue(field string, t *asl.Template) tmpl {
	switch t.Kind {
	case asl.TemplateExpr:
		return compileExpr(field, t.Expr)
	case asl.TemplateObject:
		o := &tObj{keys: make([]string, len(t.Fields)), vals: make([]tmpl, len(t.Fields))}
		dynamic := false
		for i, f := range t.Fields {
			o.keys[i] = f.Name()
			o.vals[i] = compileValue(f.Key, f.Value)
			_, c := o.vals[i].(tConst)
			dynamic = dynamic || !c
		}
		if dynamic {
			return o
		}
		m := make(map[string]any, len(o.keys))
		for i, k := range o.keys {
			m[k] = o.vals[i].(tConst).v
		}
		return tConst{v: m}
	case asl.TemplateArray:
		a := &tArr{elems: make([]tmpl, len(t.Elems))}
		dynamic := false
		for i, e := range t.Elems {
			a.elems[i] = compileValue(field, e)
			_, c := a.elems[i].(tConst)
			dynamic = dynamic || !c
		}
		if dynamic {
			return a
		}
		v := make([]any, len(a.elems))
		for i, e := range a.elems {
			v[i] = e.(tConst).v
		}
		return tConst{v: v}
	}
	return tConst{v: t.Value}
}
