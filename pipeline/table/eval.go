package table

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"strings"
	"unsafe"
)

// ErrInvalidUpdate is returned for an update or condition that cannot be
// applied: a Set below a missing parent, an Add on a non-number, two updates
// on overlapping paths, a change to a key attribute, or a value outside the
// allowed set. It is a caller bug, never a race, so it is not retried.
var ErrInvalidUpdate = errors.New("table: invalid update")

// Normalize turns a Go value into the value set an Item holds: string,
// float64, bool, nil, []any and map[string]any. Integers and float32 become
// float64, typed slices and maps become []any and map[string]any, and any
// other value (a struct, time.Time, ...) goes through its JSON encoding.
// A value that cannot be represented (NaN, a channel, ...) becomes nil; use
// NormalizeValue to get the error instead.
func Normalize(v any) any {
	n, err := NormalizeValue(v)
	if err != nil {
		return nil
	}
	return n
}

// NormalizeValue is Normalize reporting values that cannot be represented.
func NormalizeValue(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return x, nil
	case bool:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: number %v", ErrInvalidUpdate, x)
		}
		return x, nil
	case float32:
		return NormalizeValue(float64(x))
	case int:
		return float64(x), nil
	case int8:
		return float64(x), nil
	case int16:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case uint8:
		return float64(x), nil
	case uint16:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%w: number %q", ErrInvalidUpdate, x)
		}
		return NormalizeValue(f)
	case Item:
		if x == nil {
			return nil, nil
		}
		return normalizeMap(x)
	case map[string]any:
		if x == nil {
			return nil, nil // as JSON encodes a nil map
		}
		return normalizeMap(x)
	case []any:
		if x == nil {
			return nil, nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			n, err := NormalizeValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	return normalizeReflect(v)
}

func normalizeMap(m map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, e := range m {
		n, err := NormalizeValue(e)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

// normalizeReflect handles typed slices and string-keyed maps without a JSON
// round trip, and falls back to JSON for everything else.
func normalizeReflect(v any) (any, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return nil, nil
		}
		return NormalizeValue(rv.Elem().Interface())
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			break // []byte: JSON encodes it as base64, as DynamoDB would not; keep JSON's choice
		}
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil, nil
		}
		out := make([]any, rv.Len())
		for i := range out {
			n, err := NormalizeValue(rv.Index(i).Interface())
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		if rv.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			n, err := NormalizeValue(iter.Value().Interface())
			if err != nil {
				return nil, err
			}
			out[iter.Key().String()] = n
		}
		return out, nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return NormalizeValue(rv.Float())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: value of type %T: %v", ErrInvalidUpdate, v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%w: value of type %T: %v", ErrInvalidUpdate, v, err)
	}
	return out, nil
}

// Lookup returns the value at a dotted path and whether it is present.
func Lookup(item Item, path string) (any, bool) {
	parts, err := SplitPath(path)
	if err != nil {
		return nil, false
	}
	var cur any = map[string]any(item)
	for _, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Eval reports whether cond holds for item. A nil item is a missing item:
// every attribute is absent. A nil cond always holds.
func Eval(cond Cond, item Item) (bool, error) {
	switch c := cond.(type) {
	case nil:
		return true, nil
	case Exists:
		_, ok := Lookup(item, c.Path)
		return ok, validPath(c.Path)
	case NotExists:
		_, ok := Lookup(item, c.Path)
		return !ok, validPath(c.Path)
	case Equals:
		v, ok := Lookup(item, c.Path)
		if err := validPath(c.Path); err != nil {
			return false, err
		}
		want, err := NormalizeValue(c.Value)
		if err != nil {
			return false, err
		}
		return ok && reflect.DeepEqual(v, want), nil
	case NotEquals:
		holds, err := Eval(Equals(c), item)
		return !holds, err
	case In:
		v, ok := Lookup(item, c.Path)
		if err := validPath(c.Path); err != nil {
			return false, err
		}
		if len(c.Values) == 0 {
			return false, fmt.Errorf("%w: In on %q with no values", ErrInvalidUpdate, c.Path)
		}
		found := false
		for _, want := range c.Values {
			w, err := NormalizeValue(want)
			if err != nil {
				return false, err
			}
			if ok && reflect.DeepEqual(v, w) {
				found = true
			}
		}
		return found, nil
	case LessThan:
		v, ok := Lookup(item, c.Path)
		f, isNum := v.(float64)
		return ok && isNum && f < c.Value, validPath(c.Path)
	case And:
		for _, sub := range c {
			holds, err := Eval(sub, item)
			if err != nil || !holds {
				return false, err
			}
		}
		return true, nil
	case Or:
		for _, sub := range c {
			holds, err := Eval(sub, item)
			if err != nil {
				return false, err
			}
			if holds {
				return true, nil
			}
		}
		return false, nil
	case Not:
		holds, err := Eval(c.Cond, item)
		return !holds, err
	}
	return false, fmt.Errorf("%w: unknown condition %T", ErrInvalidUpdate, cond)
}

func validPath(path string) error {
	_, err := SplitPath(path)
	return err
}

// Apply returns a copy of item with updates applied in order; item itself is
// not modified. It enforces what DynamoDB enforces, so a repository that
// works on SQLite also works there: key attributes (PK, SK) cannot change,
// a nested Set needs its parent map, Add needs a number (absent counts as 0),
// and no two updates may touch overlapping paths.
//
// Only the maps on the updated paths are copied: the result shares every
// other nested map with item (a step item's update copies the map of the
// step it changes, not those of the six others). Treat both as read-only,
// or DeepCopy.
func Apply(item Item, updates []Update) (Item, error) {
	paths, err := UpdatePaths(updates)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(item)+1)
	maps.Copy(out, item)
	fresh := map[unsafe.Pointer]bool{reflect.ValueOf(out).UnsafePointer(): true}
	for i, u := range updates {
		if err := applyOne(out, paths[i], u, fresh); err != nil {
			return nil, err
		}
	}
	return Item(out), nil
}

// applyOne applies u at parts below root, first copying each map on the
// way that is not one of this Apply's own (fresh).
func applyOne(root map[string]any, parts []string, u Update, fresh map[unsafe.Pointer]bool) error {
	parent := root
	for i, p := range parts[:len(parts)-1] {
		next, ok := parent[p].(map[string]any)
		if !ok {
			if _, isRemove := u.(Remove); isRemove {
				return nil // nothing to remove below a missing parent
			}
			return fmt.Errorf("%w: parent %q of %q is not a map", ErrInvalidUpdate, strings.Join(parts[:i+1], "."), strings.Join(parts, "."))
		}
		if !fresh[reflect.ValueOf(next).UnsafePointer()] {
			next = maps.Clone(next)
			fresh[reflect.ValueOf(next).UnsafePointer()] = true
			parent[p] = next
		}
		parent = next
	}
	name := parts[len(parts)-1]
	switch x := u.(type) {
	case Set:
		v, err := NormalizeValue(x.Value)
		if err != nil {
			return err
		}
		parent[name] = v
	case Add:
		if math.IsNaN(x.Delta) || math.IsInf(x.Delta, 0) {
			return fmt.Errorf("%w: add %v", ErrInvalidUpdate, x.Delta)
		}
		cur := 0.0
		if v, ok := parent[name]; ok {
			f, isNum := v.(float64)
			if !isNum {
				return fmt.Errorf("%w: add to non-number %q", ErrInvalidUpdate, strings.Join(parts, "."))
			}
			cur = f
		}
		parent[name] = cur + x.Delta
	case Remove:
		delete(parent, name)
	}
	return nil
}

// DeepCopy returns a copy of item sharing no maps or slices with it.
func DeepCopy(item Item) Item {
	if item == nil {
		return nil
	}
	return Item(deepCopyMap(item))
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return deepCopyMap(x)
	case Item:
		return deepCopyMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}
