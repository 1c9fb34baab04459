// Package table defines the narrow single-table interface every state driver
// (SQLite, DynamoDB) implements, with typed conditions and updates so that no
// driver has to parse expression strings.
package table

import (
	"context"
	"errors"
	"fmt"
)

// Attribute names fixed by the single-table design.
const (
	AttrPK     = "PK"
	AttrSK     = "SK"
	AttrGSI1PK = "GSI1PK"
	AttrGSI1SK = "GSI1SK"
	AttrGSI2PK = "GSI2PK"
	AttrGSI2SK = "GSI2SK"
	AttrTTL    = "ttl"
	AttrData   = "data"
)

// Index names. IndexTable ("") queries the base table.
const (
	IndexTable = ""
	IndexGSI1  = "GSI1"
	IndexGSI2  = "GSI2"
)

// MaxTransactItems is the largest transaction every driver accepts
// (DynamoDB's TransactWriteItems limit).
const MaxTransactItems = 100

// Shared error sentinels; drivers map their native errors onto these and
// callers test them with errors.Is.
var (
	ErrNotFound            = errors.New("table: item not found")
	ErrConditionFailed     = errors.New("table: condition failed")
	ErrTransactionConflict = errors.New("table: transaction conflict")
)

// Key addresses one item.
type Key struct {
	PK string
	SK string
}

func (k Key) String() string { return k.PK + "|" + k.SK }

// Item is one stored item: attribute name to value. Values are limited to
// what both JSON and DynamoDB represent alike: string, float64 (every number
// reads back as float64), bool, nil, []any and map[string]any. PK and SK are
// always present; GSI attributes and ttl are present only when set.
type Item map[string]any

// Key returns the item's primary key.
func (it Item) Key() Key {
	pk, _ := it[AttrPK].(string)
	sk, _ := it[AttrSK].(string)
	return Key{PK: pk, SK: sk}
}

// Data returns the entity payload map (nil when absent).
func (it Item) Data() map[string]any {
	d, _ := it[AttrData].(map[string]any)
	return d
}

// Query reads one partition of the table or of an index, in sort-key order.
// At most one of SKPrefix and the SKFrom/SKTo range is used.
type Query struct {
	Index     string // IndexTable, IndexGSI1 or IndexGSI2
	PK        string // partition key value (PK, GSI1PK or GSI2PK)
	SKPrefix  string // begins_with on the sort key
	SKFrom    string // inclusive lower bound (with SKTo: BETWEEN)
	SKTo      string // inclusive upper bound
	Reverse   bool   // descending sort-key order
	Limit     int    // at most this many items per page; 0 means driver default
	PageToken string // opaque; from Page.Next
	// CountOnly asks for the number of matching live items instead of the
	// items: the answer is Page.Count, over the whole range in one call,
	// with no Items and no Next. Limit, when set, stops the count there,
	// which bounds its cost on a large partition. PageToken is ignored.
	CountOnly bool
}

// Page is one page of query results. Next is empty on the last page.
type Page struct {
	Items []Item
	Next  string
	Count int // matching items, for a CountOnly query
}

// Table is the state store. Reads ignore items whose ttl (epoch seconds) is
// in the past: expiry is lazy on DynamoDB, so correctness cannot wait for it.
// Update on a missing item creates it (upsert) unless the condition forbids.
// Paths name nested attributes with dots: "data.steps.ocr.status". A Set on a
// nested path requires its parent map to exist.
type Table interface {
	Get(ctx context.Context, key Key) (Item, error)
	Put(ctx context.Context, item Item, cond Cond) error
	// Update applies updates to one item and returns the item afterwards.
	// It is not idempotent: an Add whose answer was lost and which the
	// client sends again adds twice. A count that must be exact goes
	// through Transact (DynamoDB applies a resent transaction once) with a
	// condition that a second application would fail.
	Update(ctx context.Context, key Key, updates []Update, cond Cond) (Item, error)
	Delete(ctx context.Context, key Key, cond Cond) error
	Query(ctx context.Context, q Query) (Page, error)
	// Transact applies up to MaxTransactItems actions atomically: all or
	// nothing. A failed condition returns a *TxCanceledError.
	Transact(ctx context.Context, actions []TxAction) error
}

// TxAction is one of TxPut, TxUpdate, TxDelete, TxCheck.
type TxAction interface{ txAction() }

// TxPut writes a whole item.
type TxPut struct {
	Item Item
	Cond Cond
}

// TxUpdate updates one item.
type TxUpdate struct {
	Key     Key
	Updates []Update
	Cond    Cond
}

// TxDelete deletes one item.
type TxDelete struct {
	Key  Key
	Cond Cond
}

// TxCheck only asserts a condition on an item.
type TxCheck struct {
	Key  Key
	Cond Cond
}

func (TxPut) txAction()    {}
func (TxUpdate) txAction() {}
func (TxDelete) txAction() {}
func (TxCheck) txAction()  {}

// TxCanceledError reports which actions of a transaction failed their
// condition. Failed[i] is true for each action whose condition did not hold.
// It matches ErrConditionFailed with errors.Is.
type TxCanceledError struct {
	Failed []bool
}

func (e *TxCanceledError) Error() string {
	var idx []int
	for i, f := range e.Failed {
		if f {
			idx = append(idx, i)
		}
	}
	return fmt.Sprintf("table: transaction canceled: condition failed on action(s) %v", idx)
}

// Is makes errors.Is(err, ErrConditionFailed) true.
func (e *TxCanceledError) Is(target error) bool { return target == ErrConditionFailed }
