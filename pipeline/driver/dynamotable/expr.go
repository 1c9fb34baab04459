package dynamotable

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/docpipe/docpipe/pipeline/table"
)

// maxInOperands is DynamoDB's limit on the right-hand side of IN; longer
// lists are split into an OR of INs.
const maxInOperands = 100

// name builds a document path from a dotted path. Segments are added one by
// one rather than through expression.Name, which would also read "[n]" in a
// segment as a list index.
func name(path string) (expression.NameBuilder, error) {
	parts, err := table.SplitPath(path)
	if err != nil {
		return expression.NameBuilder{}, err
	}
	return nameOf(parts), nil
}

// nameOf builds a document path from names already split.
func nameOf(parts []string) expression.NameBuilder {
	nb := expression.NameNoDotSplit(parts[0])
	for _, p := range parts[1:] {
		nb = nb.AppendName(expression.NameNoDotSplit(p))
	}
	return nb
}

func value(v any) (expression.ValueBuilder, error) {
	av, err := encodeValue(v)
	if err != nil {
		return expression.ValueBuilder{}, err
	}
	return expression.Value(av), nil
}

// cnode is a built condition, or a constant when the typed condition folds
// to one (an empty And, a nil Cond inside Or, ...): DynamoDB has no literal
// true or false.
type cnode struct {
	b     expression.ConditionBuilder
	konst int // 0: b; kTrue; kFalse
}

const (
	kTrue = iota + 1
	kFalse
)

func buildCond(c table.Cond) (cnode, error) {
	switch x := c.(type) {
	case nil:
		return cnode{konst: kTrue}, nil
	case table.Exists:
		n, err := name(x.Path)
		return cnode{b: n.AttributeExists()}, err
	case table.NotExists:
		n, err := name(x.Path)
		return cnode{b: n.AttributeNotExists()}, err
	case table.Equals:
		n, err := name(x.Path)
		if err != nil {
			return cnode{}, err
		}
		v, err := value(x.Value)
		return cnode{b: n.Equal(v)}, err
	case table.NotEquals:
		n, err := name(x.Path)
		if err != nil {
			return cnode{}, err
		}
		v, err := value(x.Value)
		// Spelled out so that an absent attribute holds on every
		// implementation, whatever it makes of "<>" against nothing.
		return cnode{b: expression.Or(n.AttributeNotExists(), n.NotEqual(v))}, err
	case table.In:
		return buildIn(x)
	case table.LessThan:
		n, err := name(x.Path)
		if err != nil {
			return cnode{}, err
		}
		if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
			return cnode{}, fmt.Errorf("%w: LessThan %v", table.ErrInvalidUpdate, x.Value)
		}
		// The type test spells out "a number": DynamoDB finds a string
		// simply not less than a number, but other implementations fail
		// the whole request on the comparison.
		return cnode{b: expression.And(n.AttributeType(expression.Number), n.LessThan(expression.Value(x.Value)))}, nil
	case table.And:
		return fold(x, kFalse, kTrue, expression.And)
	case table.Or:
		return fold(x, kTrue, kFalse, expression.Or)
	case table.Not:
		in, err := buildCond(x.Cond)
		switch {
		case err != nil:
			return cnode{}, err
		case in.konst == kTrue:
			return cnode{konst: kFalse}, nil
		case in.konst == kFalse:
			return cnode{konst: kTrue}, nil
		}
		return cnode{b: expression.Not(in.b)}, nil
	}
	return cnode{}, fmt.Errorf("%w: unknown condition %T", table.ErrInvalidUpdate, c)
}

func buildIn(x table.In) (cnode, error) {
	n, err := name(x.Path)
	if err != nil {
		return cnode{}, err
	}
	if len(x.Values) == 0 {
		return cnode{}, fmt.Errorf("%w: In on %q with no values", table.ErrInvalidUpdate, x.Path)
	}
	var parts []expression.ConditionBuilder
	for chunk := range slices.Chunk(x.Values, maxInOperands) {
		ops := make([]expression.OperandBuilder, len(chunk))
		for i, v := range chunk {
			vb, err := value(v)
			if err != nil {
				return cnode{}, err
			}
			ops[i] = vb
		}
		parts = append(parts, n.In(ops[0], ops[1:]...))
	}
	if len(parts) == 1 {
		return cnode{b: parts[0]}, nil
	}
	return cnode{b: expression.Or(parts[0], parts[1], parts[2:]...)}, nil
}

// fold combines the children of And (absorbing constant kFalse, neutral
// kTrue) or Or (absorbing kTrue, neutral kFalse).
func fold(children []table.Cond, absorbing, neutral int,
	join func(l, r expression.ConditionBuilder, more ...expression.ConditionBuilder) expression.ConditionBuilder,
) (cnode, error) {
	var bs []expression.ConditionBuilder
	absorbed := false
	for _, c := range children {
		n, err := buildCond(c)
		if err != nil {
			return cnode{}, err
		}
		switch n.konst {
		case absorbing:
			absorbed = true // keep going: every child must still be valid
		case neutral:
		default:
			bs = append(bs, n.b)
		}
	}
	switch {
	case absorbed:
		return cnode{konst: absorbing}, nil
	case len(bs) == 0:
		return cnode{konst: neutral}, nil
	case len(bs) == 1:
		return cnode{b: bs[0]}, nil
	}
	return cnode{b: join(bs[0], bs[1], bs[2:]...)}, nil
}

// expiredCond holds for an item whose ttl has passed. attribute_type keeps
// it false for a non-number ttl, as expired does.
func expiredCond(now int64) expression.ConditionBuilder {
	ttl := expression.Name(table.AttrTTL)
	return expression.And(
		ttl.AttributeType(expression.Number),
		ttl.LessThanEqual(expression.Value(now)),
	)
}

// liveCond holds for an item that is present and not expired.
func liveCond(now int64) expression.ConditionBuilder { return expression.Not(expiredCond(now)) }

var (
	// alwaysTrue and alwaysFalse stand in for constant conditions where
	// DynamoDB needs an expression (a ConditionCheck, a folded Or{}).
	alwaysTrue  = expression.Or(expression.Name(table.AttrPK).AttributeExists(), expression.Name(table.AttrPK).AttributeNotExists())
	alwaysFalse = expression.And(expression.Name(table.AttrPK).AttributeExists(), expression.Name(table.AttrPK).AttributeNotExists())
)

// condExpr builds a write's condition expression. Without a condition it
// is the zero Expression, whose condition, names and values are all nil.
func condExpr(c table.Cond, now int64, need bool) (expression.Expression, error) {
	cb, ok, err := writeCond(c, now, need)
	if err != nil || !ok {
		return expression.Expression{}, err
	}
	return expression.NewBuilder().WithCondition(cb).Build()
}

// writeCond turns a typed condition into the condition of a write. An
// expired item must look absent to the condition, as it does to reads, so
// the condition is joined with the item's liveness: a condition that holds
// on a missing item also holds on an expired one, and any other condition
// needs a live item. It returns ok=false when the write needs no condition
// at all; need forces an expression (a ConditionCheck must have one).
func writeCond(c table.Cond, now int64, need bool) (cb expression.ConditionBuilder, ok bool, err error) {
	n, err := buildCond(c)
	if err != nil {
		return cb, false, err
	}
	onAbsent, err := table.Eval(c, nil)
	if err != nil {
		return cb, false, err
	}
	switch {
	case n.konst == kTrue && need:
		return alwaysTrue, true, nil
	case n.konst == kTrue:
		return cb, false, nil
	case n.konst == kFalse:
		return alwaysFalse, true, nil
	case onAbsent:
		return expression.Or(n.b, expiredCond(now)), true, nil
	}
	return expression.And(n.b, liveCond(now)), true, nil
}

// buildUpdate checks updates the way table.Apply does — so that a caller
// bug is reported before a request, identically on every driver — and turns
// them into an update expression. Checks that need the stored item (a
// missing parent map, Add on a non-number) are left to DynamoDB.
//
// It also returns guards: conditions that hold exactly when those
// item-dependent checks pass (every parent of a nested Set or Add is a map,
// every Add finds a number or nothing). Sent with the update, they make
// DynamoDB refuse such an update as a failed condition, which the driver
// then tells apart from the caller's own condition (see guardFailed),
// instead of depending on the wording of validation messages, or on an
// implementation that accepts a Set below a string.
func buildUpdate(updates []table.Update) (expression.UpdateBuilder, []expression.ConditionBuilder, error) {
	var ub expression.UpdateBuilder
	var guards []expression.ConditionBuilder
	guarded := map[string]bool{}
	paths, err := table.UpdatePaths(updates)
	if err != nil {
		return ub, nil, err
	}
	for i, u := range updates {
		parts := paths[i]
		path := strings.Join(parts, ".")
		n := nameOf(parts)
		isIndexAttr := len(parts) == 1 && slices.Contains(indexAttrs, parts[0])
		if _, isRemove := u.(table.Remove); !isRemove && len(parts) > 1 {
			parent := strings.Join(parts[:len(parts)-1], ".")
			if !guarded[parent] {
				guarded[parent] = true
				pn := nameOf(parts[:len(parts)-1])
				guards = append(guards, pn.AttributeType(expression.Map))
			}
		}
		switch x := u.(type) {
		case table.Set:
			av, err := encodeValue(x.Value)
			if err != nil {
				return ub, nil, err
			}
			if s, ok := av.(*types.AttributeValueMemberS); isIndexAttr && (!ok || s.Value == "") {
				return ub, nil, fmt.Errorf("%w: index attribute %s must be a non-empty string", table.ErrInvalidUpdate, path)
			}
			ub = ub.Set(n, expression.Value(av))
		case table.Add:
			if math.IsNaN(x.Delta) || math.IsInf(x.Delta, 0) {
				return ub, nil, fmt.Errorf("%w: add %v", table.ErrInvalidUpdate, x.Delta)
			}
			if isIndexAttr {
				return ub, nil, fmt.Errorf("%w: add to index attribute %s", table.ErrInvalidUpdate, path)
			}
			// SET p = if_not_exists(p, 0) + d rather than ADD: same result
			// for a number, and valid on nested paths on every
			// implementation, where ADD is documented for top-level
			// attributes only.
			guards = append(guards, expression.Or(n.AttributeNotExists(), n.AttributeType(expression.Number)))
			ub = ub.Set(n, expression.Plus(n.IfNotExists(expression.Value(0)), expression.Value(x.Delta)))
		case table.Remove:
			ub = ub.Remove(n)
		}
	}
	return ub, guards, nil
}
