package interp

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/docpipe/docpipe/statemachine/asl"
)

// Limits Step Functions places on intrinsic functions.
const (
	maxArrayRange   = 1000
	maxBase64Input  = 10000
	maxHashInput    = 10000
	maxStringToJSON = 256 * 1024
)

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func intrinsicFailure(format string, args ...any) *failure {
	return &failure{name: asl.ErrorIntrinsicFailure, cause: fmt.Sprintf(format, args...)}
}

func evalIntrinsic(env *evalEnv, c *asl.Intrinsic, data any) (any, *failure) {
	args := make([]any, len(c.Args))
	for i, a := range c.Args {
		switch a.Kind {
		case asl.ArgLiteral:
			args[i] = a.Value
		case asl.ArgPath:
			v, ok := env.resolve(a.Path, data)
			if !ok {
				return nil, runtimeFailure("The JsonPath argument '%s' of %s could not be found in the input", a.Path.Raw, c.Name)
			}
			args[i] = v
		case asl.ArgCall:
			v, f := evalIntrinsic(env, a.Call, data)
			if f != nil {
				return nil, f
			}
			args[i] = v
		}
	}
	switch c.Name {
	case "States.Format":
		return fnFormat(c, args)
	case "States.StringToJson":
		s, f := strArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		if len(s) > maxStringToJSON {
			return nil, intrinsicFailure("input exceeds %d bytes", maxStringToJSON)
		}
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, intrinsicFailure("argument is not valid JSON: %v", err)
		}
		return v, nil
	case "States.JsonToString":
		b, err := json.Marshal(args[0])
		if err != nil {
			return nil, intrinsicFailure("%v", err)
		}
		return string(b), nil
	case "States.Array":
		return args, nil
	case "States.ArrayPartition":
		a, f := arrArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		n, f := intArg(c, args, 1)
		if f != nil {
			return nil, f
		}
		if n <= 0 {
			return nil, intrinsicFailure("chunk size must be positive, got %d", n)
		}
		out := []any{}
		for i := 0; i < len(a); i += n {
			out = append(out, a[i:min(i+n, len(a))])
		}
		return out, nil
	case "States.ArrayContains":
		a, f := arrArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		for _, e := range a {
			if reflect.DeepEqual(e, args[1]) {
				return true, nil
			}
		}
		return false, nil
	case "States.ArrayRange":
		var n [3]int
		for i := range n {
			v, f := intArg(c, args, i)
			if f != nil {
				return nil, f
			}
			n[i] = v
		}
		if n[2] == 0 {
			return nil, intrinsicFailure("step must not be 0")
		}
		out := []any{}
		for v := n[0]; (n[2] > 0 && v <= n[1]) || (n[2] < 0 && v >= n[1]); v += n[2] {
			if len(out) == maxArrayRange {
				return nil, intrinsicFailure("range exceeds %d elements", maxArrayRange)
			}
			out = append(out, float64(v))
		}
		return out, nil
	case "States.ArrayGetItem":
		a, f := arrArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		i, f := intArg(c, args, 1)
		if f != nil {
			return nil, f
		}
		if i < 0 || i >= len(a) {
			return nil, intrinsicFailure("index %d out of bounds for array of length %d", i, len(a))
		}
		return a[i], nil
	case "States.ArrayLength":
		a, f := arrArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		return float64(len(a)), nil
	case "States.ArrayUnique":
		a, f := arrArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		out := []any{}
		for _, e := range a {
			if !slices.ContainsFunc(out, func(o any) bool { return reflect.DeepEqual(o, e) }) {
				out = append(out, e)
			}
		}
		return out, nil
	case "States.Base64Encode":
		s, f := strArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		if len(s) > maxBase64Input {
			return nil, intrinsicFailure("input exceeds %d characters", maxBase64Input)
		}
		return base64.StdEncoding.EncodeToString([]byte(s)), nil
	case "States.Base64Decode":
		s, f := strArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		if len(s) > maxBase64Input {
			return nil, intrinsicFailure("input exceeds %d characters", maxBase64Input)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, intrinsicFailure("invalid base64: %v", err)
		}
		return string(b), nil
	case "States.Hash":
		return fnHash(c, args)
	case "States.JsonMerge":
		a, ok1 := args[0].(map[string]any)
		b, ok2 := args[1].(map[string]any)
		if !ok1 || !ok2 {
			return nil, intrinsicFailure("States.JsonMerge merges two objects")
		}
		if deep, ok := args[2].(bool); !ok || deep {
			return nil, intrinsicFailure("States.JsonMerge supports only shallow merges (third argument false)")
		}
		out := make(map[string]any, len(a)+len(b))
		maps.Copy(out, a)
		maps.Copy(out, b)
		return out, nil
	case "States.MathRandom":
		lo, f := intArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		hi, f := intArg(c, args, 1)
		if f != nil {
			return nil, f
		}
		if hi <= lo {
			return nil, intrinsicFailure("end (%d) must be greater than start (%d)", hi, lo)
		}
		var r uint64
		if len(args) == 3 {
			seed, f := intArg(c, args, 2)
			if f != nil {
				return nil, f
			}
			// A seeded call is repeatable, as on Step Functions.
			r = splitmix(uint64(seed))
		} else {
			r = env.ex.eng.uint64()
		}
		return float64(lo + int(r%uint64(hi-lo))), nil
	case "States.MathAdd":
		a, f := intArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		b, f := intArg(c, args, 1)
		if f != nil {
			return nil, f
		}
		return float64(a + b), nil
	case "States.StringSplit":
		s, f := strArg(c, args, 0)
		if f != nil {
			return nil, f
		}
		d, f := strArg(c, args, 1)
		if f != nil {
			return nil, f
		}
		out := []any{}
		for _, p := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(d, r) }) {
			out = append(out, p)
		}
		return out, nil
	case "States.UUID":
		u, err := uuid.NewRandomFromReader(randReader{env.ex.eng})
		if err != nil {
			return nil, intrinsicFailure("%v", err)
		}
		return u.String(), nil
	}
	return nil, intrinsicFailure("unknown function %s", c.Name)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// randReader feeds uuid from the engine's (possibly seeded) random source.
type randReader struct{ e *Engine }

func (r randReader) Read(p []byte) (int, error) {
	for i := 0; i < len(p); i += 8 {
		v := r.e.uint64()
		for j := 0; j < 8 && i+j < len(p); j++ {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	return len(p), nil
}

func strArg(c *asl.Intrinsic, args []any, i int) (string, *failure) {
	s, ok := args[i].(string)
	if !ok {
		return "", intrinsicFailure("argument %d of %s must be a string, got %s", i+1, c.Name, typeName(args[i]))
	}
	return s, nil
}

func arrArg(c *asl.Intrinsic, args []any, i int) ([]any, *failure) {
	a, ok := args[i].([]any)
	if !ok {
		return nil, intrinsicFailure("argument %d of %s must be an array, got %s", i+1, c.Name, typeName(args[i]))
	}
	return a, nil
}

func intArg(c *asl.Intrinsic, args []any, i int) (int, *failure) {
	f, ok := args[i].(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, intrinsicFailure("argument %d of %s must be an integer, got %v", i+1, c.Name, args[i])
	}
	return int(f), nil
}

// fnFormat fills {} placeholders; \{ \} and \\ in the template are literal.
func fnFormat(c *asl.Intrinsic, args []any) (any, *failure) {
	tpl := c.Args[0]
	if tpl.Kind != asl.ArgLiteral {
		s, ok := args[0].(string)
		if !ok {
			return nil, intrinsicFailure("the template of States.Format must be a string")
		}
		tpl = asl.Arg{Raw: s}
	} else if _, ok := tpl.Value.(string); !ok {
		return nil, intrinsicFailure("the template of States.Format must be a string")
	}
	var b strings.Builder
	raw := tpl.Raw
	next := 1
	for i := 0; i < len(raw); i++ {
		switch ch := raw[i]; {
		case ch == '\\' && i+1 < len(raw):
			i++
			b.WriteByte(raw[i])
		case ch == '{' && i+1 < len(raw) && raw[i+1] == '}':
			if next >= len(args) {
				return nil, intrinsicFailure("States.Format has more placeholders than arguments")
			}
			s, f := formatArg(args[next])
			if f != nil {
				return nil, f
			}
			b.WriteString(s)
			next++
			i++
		default:
			b.WriteByte(ch)
		}
	}
	if next != len(args) {
		return nil, intrinsicFailure("States.Format has %d placeholders but %d arguments", next-1, len(args)-1)
	}
	return b.String(), nil
}

func formatArg(v any) (string, *failure) {
	switch x := v.(type) {
	case string:
		return x, nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	case nil:
		return "null", nil
	}
	return "", intrinsicFailure("States.Format arguments must be strings, numbers, booleans or null, got %s", typeName(v))
}

func fnHash(c *asl.Intrinsic, args []any) (any, *failure) {
	var data string
	switch x := args[0].(type) {
	case string:
		data = x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, intrinsicFailure("%v", err)
		}
		data = string(b)
	}
	if len(data) > maxHashInput {
		return nil, intrinsicFailure("input exceeds %d characters", maxHashInput)
	}
	alg, f := strArg(c, args, 1)
	if f != nil {
		return nil, f
	}
	var h hash.Hash
	switch alg {
	case "MD5":
		h = md5.New()
	case "SHA-1":
		h = sha1.New()
	case "SHA-256":
		h = sha256.New()
	case "SHA-384":
		h = sha512.New384()
	case "SHA-512":
		h = sha512.New()
	default:
		return nil, intrinsicFailure("unsupported hash algorithm %q (MD5, SHA-1, SHA-256, SHA-384, SHA-512)", alg)
	}
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil)), nil
}
