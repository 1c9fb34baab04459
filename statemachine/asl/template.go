package asl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Expr is a value computed at run time: the value of a "name.$" template
// field, or a Fail state's ErrorPath/CausePath. It is a path ($ for the
// state's data, $$ for the context object) or an intrinsic function call.
// A malformed expression keeps its text; Validate reports why.
type Expr struct {
	Raw  string
	Path *Path      // set when Raw is a path
	Call *Intrinsic // set when Raw is an intrinsic function call
	err  error
}

// NewExpr parses s as a path or, when it starts with "States.", an
// intrinsic function call.
func NewExpr(s string) *Expr {
	e := &Expr{Raw: s}
	if LooksLikeIntrinsic(s) {
		e.Call, e.err = ParseIntrinsic(s)
	} else {
		e.Path, e.err = ParsePath(s)
	}
	return e
}

// UnmarshalJSON reads an expression string.
func (e *Expr) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("must be a path or intrinsic function string")
	}
	*e = *NewExpr(s)
	return nil
}

// MarshalJSON writes the source text.
func (e Expr) MarshalJSON() ([]byte, error) { return json.Marshal(e.Raw) }

// TemplateKind is the kind of a Template node.
type TemplateKind uint8

const (
	// TemplateValue is a constant JSON value.
	TemplateValue TemplateKind = iota
	// TemplateObject is an object whose fields are templates.
	TemplateObject
	// TemplateArray is an array whose elements are templates.
	TemplateArray
	// TemplateExpr is the value of a "name.$" field, evaluated at run time.
	TemplateExpr
)

// Template is a payload template (Parameters, ResultSelector, ItemSelector,
// ItemReader Parameters), parsed once: fields whose names end in ".$" hold
// expressions, everything else is constant.
type Template struct {
	Kind   TemplateKind
	Value  any             // TemplateValue: string, float64, bool, nil, or a decoded object/array
	Fields []TemplateField // TemplateObject, sorted by key
	Elems  []*Template     // TemplateArray
	Expr   *Expr           // TemplateExpr
}

// TemplateField is one field of a template object.
type TemplateField struct {
	Key   string // as written: "name.$" for a dynamic field
	Value *Template
}

// Name is the field's name in the evaluated object (Key without ".$").
func (f TemplateField) Name() string { return strings.TrimSuffix(f.Key, ".$") }

// Dynamic reports whether the field's value is evaluated at run time.
func (f TemplateField) Dynamic() bool { return strings.HasSuffix(f.Key, ".$") }

// Value returns a constant template.
func Value(v any) *Template { return &Template{Kind: TemplateValue, Value: v} }

// Object returns an object template; fields keep the given order.
func Object(fields ...TemplateField) *Template {
	return &Template{Kind: TemplateObject, Fields: fields}
}

// Array returns an array template.
func Array(elems ...*Template) *Template { return &Template{Kind: TemplateArray, Elems: elems} }

// Field returns a constant field: name with the constant value v.
func Field(name string, v any) TemplateField { return TemplateField{Key: name, Value: Value(v)} }

// NestedField returns a field whose value is itself a template.
func NestedField(name string, t *Template) TemplateField { return TemplateField{Key: name, Value: t} }

// DynamicField returns "name.$": expr, a field evaluated at run time.
func DynamicField(name, expr string) TemplateField {
	return TemplateField{Key: name + ".$", Value: &Template{Kind: TemplateExpr, Expr: NewExpr(expr)}}
}

// Field returns the field with the given key, or nil.
func (t *Template) Field(key string) *TemplateField {
	for i := range t.Fields {
		if t.Fields[i].Key == key {
			return &t.Fields[i]
		}
	}
	return nil
}

// UnmarshalJSON parses a template. Problems that are not JSON syntax (a
// ".$" value that is not a string, a malformed path) are kept for Validate.
func (t *Template) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = *buildTemplate(v)
	return nil
}

func buildTemplate(v any) *Template {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t := &Template{Kind: TemplateObject, Fields: make([]TemplateField, 0, len(keys))}
		for _, k := range keys {
			val := Value(x[k])
			if s, ok := x[k].(string); ok && strings.HasSuffix(k, ".$") {
				val = &Template{Kind: TemplateExpr, Expr: NewExpr(s)}
			} else if !strings.HasSuffix(k, ".$") {
				val = buildTemplate(x[k])
			}
			t.Fields = append(t.Fields, TemplateField{Key: k, Value: val})
		}
		return t
	case []any:
		t := &Template{Kind: TemplateArray, Elems: make([]*Template, len(x))}
		for i, e := range x {
			t.Elems[i] = buildTemplate(e)
		}
		return t
	}
	return Value(v)
}

// MarshalJSON writes the template in ASL form.
func (t *Template) MarshalJSON() ([]byte, error) {
	switch t.Kind {
	case TemplateExpr:
		return json.Marshal(t.Expr.Raw)
	case TemplateObject:
		var buf bytes.Buffer
		buf.WriteByte('{')
		for i, f := range t.Fields {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(f.Key)
			buf.Write(k)
			buf.WriteByte(':')
			v, err := f.Value.MarshalJSON()
			if err != nil {
				return nil, err
			}
			buf.Write(v)
		}
		buf.WriteByte('}')
		return buf.Bytes(), nil
	case TemplateArray:
		var buf bytes.Buffer
		buf.WriteByte('[')
		for i, e := range t.Elems {
			if i > 0 {
				buf.WriteByte(',')
			}
			v, err := e.MarshalJSON()
			if err != nil {
				return nil, err
			}
			buf.Write(v)
		}
		buf.WriteByte(']')
		return buf.Bytes(), nil
	}
	return json.Marshal(t.Value)
}
