package table

// Cond is a typed condition on an item's attributes. A nil Cond always holds.
// Conditions on a missing item see every attribute as absent.
type Cond interface{ cond() }

// Exists holds when the attribute at Path is present.
type Exists struct{ Path string }

// NotExists holds when the attribute at Path is absent. NotExists{AttrPK}
// means "the item does not exist".
type NotExists struct{ Path string }

// Equals holds when the attribute at Path is present and equal to Value.
type Equals struct {
	Path  string
	Value any
}

// NotEquals holds when the attribute at Path is absent or differs from Value.
type NotEquals struct {
	Path  string
	Value any
}

// In holds when the attribute at Path equals one of Values.
type In struct {
	Path   string
	Values []any
}

// LessThan holds when the numeric attribute at Path is present and < Value.
type LessThan struct {
	Path  string
	Value float64
}

// And holds when every condition holds.
type And []Cond

// Or holds when at least one condition holds.
type Or []Cond

// Not negates a condition.
type Not struct{ Cond Cond }

func (Exists) cond()    {}
func (NotExists) cond() {}
func (Equals) cond()    {}
func (NotEquals) cond() {}
func (In) cond()        {}
func (LessThan) cond()  {}
func (And) cond()       {}
func (Or) cond()        {}
func (Not) cond()       {}

// Update is a typed change to one attribute.
type Update interface{ update() }

// Set assigns Value at Path.
type Set struct {
	Path  string
	Value any
}

// Add adds Delta to the number at Path, treating an absent number as 0.
type Add struct {
	Path  string
	Delta float64
}

// Remove deletes the attribute at Path (no error when absent).
type Remove struct{ Path string }

func (Set) update()    {}
func (Add) update()    {}
func (Remove) update() {}
