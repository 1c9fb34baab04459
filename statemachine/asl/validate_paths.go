package asl

import "fmt"

// io checks InputPath and OutputPath.
func (v *validator) io(where string, io IO) {
	for _, f := range []struct {
		name string
		p    NullablePath
	}{{"InputPath", io.InputPath}, {"OutputPath", io.OutputPath}} {
		if f.p.Set && !f.p.Null {
			v.path(join(where, f.name), &f.p.Path, true)
		}
	}
}

// resultPath checks a ResultPath, which writes into the state's data and so
// cannot name the context object.
func (v *validator) resultPath(where string, p NullableReferencePath) {
	if p.Set && !p.Null {
		v.path(where, &p.Path.Path, false)
	}
}

// optPath checks an optional reference path that reads one value.
func (v *validator) optPath(where string, p *ReferencePath) {
	if p != nil {
		v.path(where, &p.Path, true)
	}
}

// path reports a path that did not parse, and a context-object path in a
// field that may not read the context object.
func (v *validator) path(where string, p *Path, allowContext bool) {
	if p.err != nil {
		v.add(where, "%v", p.err)
		return
	}
	if p.Context && !allowContext {
		v.add(where, "path %q may not refer to the context object", p.Raw)
	}
}

// expr reports an expression (".$" value, ErrorPath, CausePath) that did
// not parse.
func (v *validator) expr(where string, e *Expr) {
	if e != nil && e.err != nil {
		v.add(where, "%v", e.err)
	}
}

// template checks a payload template: an object whose "x.$" fields hold
// valid paths or intrinsic function calls.
func (v *validator) template(where string, t *Template) {
	if t == nil {
		return
	}
	if t.Kind != TemplateObject {
		v.add(where, "must be a JSON object")
		return
	}
	v.templateNode(where, t)
}

func (v *validator) templateNode(where string, t *Template) {
	switch t.Kind {
	case TemplateObject:
		for _, f := range t.Fields {
			fw := where + "." + f.Key
			if !f.Dynamic() {
				if f.Value.Kind == TemplateExpr {
					v.add(fw, "an expression needs a field name ending in .$")
					continue
				}
				v.templateNode(fw, f.Value)
				continue
			}
			if f.Key == ".$" {
				v.add(fw, "field name is empty before .$")
			}
			if f.Value.Kind != TemplateExpr {
				v.add(fw, "value of a .$ field must be a string")
				continue
			}
			v.expr(fw, f.Value.Expr)
		}
	case TemplateArray:
		for i, e := range t.Elems {
			if e.Kind == TemplateExpr {
				v.add(fmt.Sprintf("%s[%d]", where, i), "an expression needs a field name ending in .$")
				continue
			}
			v.templateNode(fmt.Sprintf("%s[%d]", where, i), e)
		}
	}
}
