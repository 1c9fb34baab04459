// Package tabletest is the conformance suite every table.Table driver runs:
// SQLite and DynamoDB pass the very same tests. It speaks only through
// table.Table, creates what each test needs under fresh keys, and never
// depends on the table being empty, so it can run against one shared table
// on a remote emulator. The Repository's suite over the same drivers is
// pipeline/repotest, tuned by the same options.
package tabletest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Option tunes the suite.
type Option func(*Config)

// Config is what the options set.
type Config struct {
	Racers     int  // workers racing one change
	Segments   int  // segments written and paged through
	Sequential bool // run racing workers one after another
	// Resent counts the requests the driver's client has sent again after
	// an error so far; nil when it never resends (a local driver).
	Resent func() int
}

// Configure applies opts to the defaults (50 racers, 2,600 segments),
// which are what a local driver must pass.
func Configure(opts ...Option) Config {
	cfg := Config{Racers: 50, Segments: 2600}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// Reduced lowers the counts of the heavy tests for a slow remote emulator.
func Reduced() Option {
	return func(c *Config) { c.Racers, c.Segments = 12, 260 }
}

// Sequential runs the workers of the racing tests one after another instead
// of at once. It is for emulators (moto) that do not apply a conditional
// write atomically under concurrent requests; the tests still check that
// repeated changes apply once and count once. SQLite and DynamoDB itself
// must pass without it.
func Sequential() Option {
	return func(c *Config) { c.Sequential = true }
}

// CountingResends gives the suite the driver client's count of requests
// sent again (Config.Resent).
func CountingResends(resent func() int) Option {
	return func(c *Config) { c.Resent = resent }
}

func (c Config) resent() int {
	if c.Resent == nil {
		return 0
	}
	return c.Resent()
}

// Race runs fn n times, concurrently unless the config says sequential.
func (c Config) Race(n int, fn func(worker int)) {
	if c.Sequential {
		for w := range n {
			fn(w)
		}
		return
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range n {
		wg.Go(func() {
			<-start
			fn(w)
		})
	}
	close(start)
	wg.Wait()
}

// Exercise runs the suite. newTable is called once per subtest and may
// return the same shared table every time.
func Exercise(t *testing.T, newTable func(t *testing.T) table.Table, opts ...Option) {
	t.Helper()
	cfg := Configure(opts...)
	t.Run("Table", func(t *testing.T) {
		t.Parallel()
		for _, tc := range tableTests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.fn(t, newTable(t), cfg)
			})
		}
	})
}

var tableTests = []struct {
	name string
	fn   func(t *testing.T, tb table.Table, cfg Config)
}{
	{"GetMissing", testGetMissing},
	{"PutGetNormalizes", testPutGetNormalizes},
	{"GetData", testGetData},
	{"GetManyData", testGetManyData},
	{"PutOverwriteAndConditions", testPutConditions},
	{"Conditions", testConditions},
	{"UpdateSetAddRemove", testUpdate},
	{"UpdateUpsert", testUpdateUpsert},
	{"UpdateInvalid", testUpdateInvalid},
	{"UpdateConcurrentAdd", testConcurrentAdd},
	{"Delete", testDelete},
	{"QueryPrefixRangeReverse", testQuery},
	{"QueryPaging", testQueryPaging},
	{"QueryIndexes", testQueryIndexes},
	{"QueryIndexPagingTies", testQueryIndexTies},
	{"QueryCountOnly", testQueryCount},
	{"TransactCommits", testTransactCommits},
	{"TransactAllOrNothing", testTransactAtomic},
	{"TransactRejectsInvalid", testTransactInvalid},
	{"TTL", testTTL},
}

// ---- helpers ----

// newPK returns a partition key no other test (or run) uses.
func newPK(kind string) string { return "tabletest#" + kind + "#" + rand.Text() }

func key(pk, sk string) table.Key { return table.Key{PK: pk, SK: sk} }

func item(pk, sk string, attrs ...any) table.Item {
	it := table.Item{table.AttrPK: pk, table.AttrSK: sk}
	for i := 0; i+1 < len(attrs); i += 2 {
		it[attrs[i].(string)] = attrs[i+1]
	}
	return it
}

// MustPut puts it unconditionally, failing the test on an error.
func MustPut(t *testing.T, tb table.Table, it table.Item) {
	t.Helper()
	if err := tb.Put(t.Context(), it, nil); err != nil {
		t.Fatalf("Put %s: %v", it.Key(), err)
	}
}

// MustGet reads the item under k, failing the test on an error.
func MustGet(t *testing.T, tb table.Table, k table.Key) table.Item {
	t.Helper()
	it, err := tb.Get(t.Context(), k)
	if err != nil {
		t.Fatalf("Get %s: %v", k, err)
	}
	return it
}

// WantMissing fails the test unless no item is under k.
func WantMissing(t *testing.T, tb table.Table, k table.Key) {
	t.Helper()
	if it, err := tb.Get(t.Context(), k); !errors.Is(err, table.ErrNotFound) {
		t.Fatalf("Get %s = %v, %v; want ErrNotFound", k, it, err)
	}
}

func wantCondFailed(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("%s: err = %v, want ErrConditionFailed", what, err)
	}
}

// WantEqual fails the test unless got deeply equals want.
func WantEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %#v, want %#v", what, got, want)
	}
}

// QueryAll follows every page of q, checking that no page is over its
// limit.
func QueryAll(t *testing.T, tb table.Table, q table.Query) []table.Item {
	t.Helper()
	var out []table.Item
	for range 10000 {
		page, err := tb.Query(t.Context(), q)
		if err != nil {
			t.Fatalf("Query %+v: %v", q, err)
		}
		if q.Limit > 0 && len(page.Items) > q.Limit {
			t.Fatalf("Query returned %d items, over its limit %d", len(page.Items), q.Limit)
		}
		out = append(out, page.Items...)
		if page.Next == "" {
			return out
		}
		q.PageToken = page.Next
	}
	t.Fatalf("Query %+v never ended", q)
	return nil
}

func sks(items []table.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Key().SK
	}
	return out
}

// expired is a ttl long past; real time, so it holds on DynamoDB too.
func expired() float64 { return float64(time.Now().Add(-48 * time.Hour).Unix()) }

func future() float64 { return float64(time.Now().Add(48 * time.Hour).Unix()) }

// ---- basic reads and writes ----

func testGetMissing(t *testing.T, tb table.Table, _ Config) {
	WantMissing(t, tb, key(newPK("missing"), "X"))
}

// testGetData: table.GetData decodes an item's data as Get and JSON
// would, whether or not the driver reads it straight from stored text, and
// misses what Get misses.
func testGetData(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	type inner struct {
		X int `json:"x"`
	}
	type entity struct {
		S      string           `json:"s"`
		I      int              `json:"i"`
		F      float64          `json:"f"`
		B      bool             `json:"b"`
		List   []string         `json:"list"`
		Nested map[string]inner `json:"nested"`
		Absent string           `json:"absent"`
	}
	pk := newPK("getdata")
	MustPut(t, tb, item(pk, "A", "GSI1PK", "g", "GSI1SK", "s", "data", map[string]any{
		"s": "text", "i": 42, "f": 1.5, "b": true, "list": []string{"a", "b"},
		"nested": map[string]any{"k": map[string]any{"x": 9}}, "extra": "ignored",
	}))
	var got entity
	if err := table.GetData(ctx, tb, key(pk, "A"), &got); err != nil {
		t.Fatalf("GetData: %v", err)
	}
	var viaGet entity
	if err := table.DecodeData(MustGet(t, tb, key(pk, "A")), &viaGet); err != nil {
		t.Fatal(err)
	}
	want := entity{S: "text", I: 42, F: 1.5, B: true, List: []string{"a", "b"}, Nested: map[string]inner{"k": {X: 9}}}
	WantEqual(t, "GetData", got, want)
	WantEqual(t, "Get then DecodeData", viaGet, want)

	MustPut(t, tb, item(pk, "NODATA"))
	keep := entity{S: "kept"}
	if err := table.GetData(ctx, tb, key(pk, "NODATA"), &keep); err != nil || keep.S != "kept" {
		t.Fatalf("GetData of an item without data: %v, %+v (want it left as it was)", err, keep)
	}
	MustPut(t, tb, item(pk, "OLD", table.AttrTTL, expired(), "data", map[string]any{"s": "old"}))
	for _, k := range []table.Key{key(pk, "OLD"), key(pk, "MISSING")} {
		if err := table.GetData(ctx, tb, k, &got); !errors.Is(err, table.ErrNotFound) {
			t.Fatalf("GetData %s = %v, want ErrNotFound", k, err)
		}
	}
}

// testGetManyData: table.GetManyData reads what GetData reads, for more
// keys than one request takes, with keys repeated, missing and expired.
func testGetManyData(t *testing.T, tb table.Table, _ Config) {
	type entity struct {
		N int    `json:"n"`
		S string `json:"s"`
	}
	pk := newPK("getmany")
	var keys []table.Key
	want := map[int]entity{}
	for i := range 2*table.MaxGetMany + 30 {
		k := key(pk, fmt.Sprintf("K%04d", i))
		switch {
		case i%7 == 3: // never written
		case i%11 == 5:
			MustPut(t, tb, item(pk, k.SK, table.AttrTTL, expired(), "data", map[string]any{"n": i}))
		default:
			MustPut(t, tb, item(pk, k.SK, "data", map[string]any{"n": i, "s": k.SK}))
			want[len(keys)] = entity{N: i, S: k.SK}
		}
		keys = append(keys, k)
		if i%13 == 0 {
			if e, ok := want[len(keys)-1]; ok {
				want[len(keys)] = e
			}
			keys = append(keys, k) // asked for twice
		}
	}
	got := make([]entity, len(keys))
	found, err := table.GetManyData(t.Context(), tb, keys, func(i int) any { return &got[i] })
	if err != nil {
		t.Fatalf("GetManyData: %v", err)
	}
	for i, k := range keys {
		e, live := want[i]
		if found[i] != live || got[i] != e {
			t.Errorf("%s (place %d): found=%v %+v, want found=%v %+v", k, i, found[i], got[i], live, e)
		}
	}
}

func testPutGetNormalizes(t *testing.T, tb table.Table, _ Config) {
	pk := newPK("put")
	MustPut(t, tb, item(pk, "A", "data", map[string]any{
		"s": "text", "i": 42, "i64": int64(-7), "f": 1.5, "b": true, "n": nil,
		"list":   []any{1, "two", map[string]any{"three": 3}},
		"nested": map[string]any{"deep": map[string]any{"x": uint8(9)}},
		"strs":   []string{"a", "b"},
		"empty":  map[string]any{},
	}))
	got := MustGet(t, tb, key(pk, "A"))
	WantEqual(t, "item", got, table.Item{
		table.AttrPK: pk, table.AttrSK: "A",
		"data": map[string]any{
			"s": "text", "i": 42.0, "i64": -7.0, "f": 1.5, "b": true, "n": nil,
			"list":   []any{1.0, "two", map[string]any{"three": 3.0}},
			"nested": map[string]any{"deep": map[string]any{"x": 9.0}},
			"strs":   []any{"a", "b"},
			"empty":  map[string]any{},
		},
	})
	// The returned item is the caller's: changing it changes nothing stored.
	got.Data()["s"] = "changed"
	if s := MustGet(t, tb, key(pk, "A")).Data()["s"]; s != "text" {
		t.Fatalf("stored item changed through a returned copy: %v", s)
	}
}

func testPutConditions(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("putcond")
	absent := table.NotExists{Path: table.AttrPK}
	if err := tb.Put(ctx, item(pk, "A", "v", 1), absent); err != nil {
		t.Fatalf("conditional create: %v", err)
	}
	wantCondFailed(t, "second create", tb.Put(ctx, item(pk, "A", "v", 2), absent))
	if v := MustGet(t, tb, key(pk, "A"))["v"]; v != 1.0 {
		t.Fatalf("failed put changed the item: v = %v", v)
	}
	// Unconditional put replaces the whole item, dropping old attributes.
	MustPut(t, tb, item(pk, "A", "w", "new"))
	WantEqual(t, "replaced", MustGet(t, tb, key(pk, "A")), item(pk, "A", "w", "new"))
	// Optimistic concurrency on a field.
	wantCondFailed(t, "put on stale value", tb.Put(ctx, item(pk, "A", "w", "x"), table.Equals{Path: "w", Value: "old"}))
	if err := tb.Put(ctx, item(pk, "A", "w", "newer"), table.Equals{Path: "w", Value: "new"}); err != nil {
		t.Fatalf("put on current value: %v", err)
	}
	// A condition on a missing item sees every attribute absent.
	wantCondFailed(t, "Exists on missing", tb.Put(ctx, item(pk, "B"), table.Exists{Path: table.AttrPK}))
	WantMissing(t, tb, key(pk, "B"))
}

// testConditions checks every condition type against one item, through a
// transaction check, and a sample through the single-item operations.
func testConditions(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("cond")
	MustPut(t, tb, item(pk, "X", "data", map[string]any{
		"status": "pending", "n": 3, "tags": []any{"a", "b"},
		"steps": map[string]any{"ocr": map[string]any{"status": "in_progress"}},
		"m":     map[string]any{"k": 1, "j": "x"},
	}))
	cases := []struct {
		name string
		cond table.Cond
		want bool
	}{
		{"nil", nil, true},
		{"Exists PK", table.Exists{Path: table.AttrPK}, true},
		{"Exists nested", table.Exists{Path: "data.steps.ocr.status"}, true},
		{"Exists missing", table.Exists{Path: "data.steps.graph.status"}, false},
		{"Exists below a scalar", table.Exists{Path: "data.status.x"}, false},
		{"NotExists missing", table.NotExists{Path: "data.nope"}, true},
		{"NotExists present", table.NotExists{Path: "data.status"}, false},
		{"Equals string", table.Equals{Path: "data.status", Value: "pending"}, true},
		{"Equals other", table.Equals{Path: "data.status", Value: "failed"}, false},
		{"Equals int normalised", table.Equals{Path: "data.n", Value: 3}, true},
		{"Equals float", table.Equals{Path: "data.n", Value: 3.0}, true},
		{"Equals type differs", table.Equals{Path: "data.n", Value: "3"}, false},
		{"Equals missing", table.Equals{Path: "data.nope", Value: "x"}, false},
		{"Equals list", table.Equals{Path: "data.tags", Value: []string{"a", "b"}}, true},
		{"Equals list order", table.Equals{Path: "data.tags", Value: []any{"b", "a"}}, false},
		{"Equals map", table.Equals{Path: "data.m", Value: map[string]any{"j": "x", "k": 1}}, true},
		{"Equals nested", table.Equals{Path: "data.steps.ocr.status", Value: "in_progress"}, true},
		{"NotEquals differs", table.NotEquals{Path: "data.status", Value: "failed"}, true},
		{"NotEquals same", table.NotEquals{Path: "data.status", Value: "pending"}, false},
		{"NotEquals missing", table.NotEquals{Path: "data.nope", Value: "x"}, true},
		{"In hit", table.In{Path: "data.status", Values: []any{"failed", "pending"}}, true},
		{"In miss", table.In{Path: "data.status", Values: []any{"failed", "completed"}}, false},
		{"In number", table.In{Path: "data.n", Values: []any{1, 3}}, true},
		{"In missing", table.In{Path: "data.nope", Values: []any{"x"}}, false},
		{"LessThan true", table.LessThan{Path: "data.n", Value: 4}, true},
		{"LessThan equal", table.LessThan{Path: "data.n", Value: 3}, false},
		{"LessThan missing", table.LessThan{Path: "data.nope", Value: 4}, false},
		{"And true", table.And{table.Exists{Path: "data.n"}, table.Equals{Path: "data.status", Value: "pending"}}, true},
		{"And false", table.And{table.Exists{Path: "data.n"}, table.Equals{Path: "data.status", Value: "x"}}, false},
		{"Or true", table.Or{table.Equals{Path: "data.status", Value: "x"}, table.Exists{Path: "data.n"}}, true},
		{"Or false", table.Or{table.Equals{Path: "data.status", Value: "x"}, table.Exists{Path: "data.q"}}, false},
		{"Not", table.Not{Cond: table.Exists{Path: "data.q"}}, true},
		{"Not Not", table.Not{Cond: table.Not{Cond: table.Exists{Path: "data.q"}}}, false},
		{"nested logic", table.Or{table.And{table.Exists{Path: "data.q"}}, table.Not{Cond: table.LessThan{Path: "data.n", Value: 1}}}, true},
	}
	for _, c := range cases {
		err := tb.Transact(ctx, []table.TxAction{table.TxCheck{Key: key(pk, "X"), Cond: c.cond}})
		switch {
		case c.want && err != nil:
			t.Errorf("%s: check failed: %v", c.name, err)
		case !c.want && !errors.Is(err, table.ErrConditionFailed):
			t.Errorf("%s: check err = %v, want ErrConditionFailed", c.name, err)
		}
	}
	// The same evaluation guards single-item writes.
	wantCondFailed(t, "Update guarded by In", func() error {
		_, err := tb.Update(ctx, key(pk, "X"), []table.Update{table.Set{Path: "data.status", Value: "done"}},
			table.In{Path: "data.status", Values: []any{"failed", "completed"}})
		return err
	}())
	wantCondFailed(t, "Delete guarded by LessThan", tb.Delete(ctx, key(pk, "X"), table.LessThan{Path: "data.n", Value: 2}))
	if got := MustGet(t, tb, key(pk, "X")).Data()["status"]; got != "pending" {
		t.Fatalf("failed writes changed the item: status = %v", got)
	}
}

func testUpdate(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("update")
	MustPut(t, tb, item(pk, "S", "data", map[string]any{
		"status": "pending", "count": 1, "keep": "me",
		"steps": map[string]any{"ocr": map[string]any{"status": "pending", "label": "OCR"}, "graph": map[string]any{"status": "pending"}},
	}, table.AttrGSI1PK, "g", table.AttrGSI1SK, "s"))
	after, err := tb.Update(ctx, key(pk, "S"), []table.Update{
		table.Set{Path: "data.steps.ocr.status", Value: "completed"},
		table.Set{Path: "data.steps.ocr.ended_at", Value: "2024"},
		table.Add{Path: "data.count", Delta: 2},
		table.Add{Path: "data.fresh", Delta: -1},
		table.Set{Path: "data.list", Value: []int{1, 2}},
		table.Remove{Path: "data.steps.graph.status"},
		table.Remove{Path: "data.not_there"},
		table.Remove{Path: table.AttrGSI1PK},
		table.Set{Path: "top", Value: 7},
	}, table.Equals{Path: "data.steps.ocr.status", Value: "pending"})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	want := item(pk, "S", "data", map[string]any{
		"status": "pending", "count": 3.0, "keep": "me", "fresh": -1.0, "list": []any{1.0, 2.0},
		"steps": map[string]any{
			"ocr":   map[string]any{"status": "completed", "label": "OCR", "ended_at": "2024"},
			"graph": map[string]any{},
		},
	}, table.AttrGSI1SK, "s", "top", 7.0)
	WantEqual(t, "Update result", after, want)
	WantEqual(t, "stored", MustGet(t, tb, key(pk, "S")), want)
	// Set replaces a whole map when asked to.
	after, err = tb.Update(ctx, key(pk, "S"), []table.Update{table.Set{Path: "data.steps", Value: map[string]any{}}}, nil)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	WantEqual(t, "steps", after.Data()["steps"], map[string]any{})
}

func testUpdateUpsert(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("upsert")
	after, err := tb.Update(ctx, key(pk, "N"), []table.Update{
		table.Add{Path: "hits", Delta: 1},
		table.Set{Path: "data", Value: map[string]any{"a": "b"}},
	}, nil)
	if err != nil {
		t.Fatalf("upsert: %v", err)
	}
	want := item(pk, "N", "hits", 1.0, "data", map[string]any{"a": "b"})
	WantEqual(t, "upserted", after, want)
	WantEqual(t, "stored", MustGet(t, tb, key(pk, "N")), want)
	// A condition that requires the item stops the upsert.
	_, err = tb.Update(ctx, key(pk, "M"), []table.Update{table.Add{Path: "hits", Delta: 1}}, table.Exists{Path: table.AttrPK})
	wantCondFailed(t, "guarded upsert", err)
	WantMissing(t, tb, key(pk, "M"))
}

func testUpdateInvalid(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("invalid")
	orig := item(pk, "I", "data", map[string]any{"s": "x", "n": 1})
	MustPut(t, tb, orig)
	for _, c := range []struct {
		name    string
		updates []table.Update
	}{
		{"nested set without parent", []table.Update{table.Set{Path: "data.steps.ocr.status", Value: "x"}}},
		{"set below a scalar", []table.Update{table.Set{Path: "data.s.x", Value: "x"}}},
		{"add to a string", []table.Update{table.Add{Path: "data.s", Delta: 1}}},
		{"overlapping paths", []table.Update{table.Set{Path: "data.n", Value: 2}, table.Add{Path: "data.n", Delta: 1}}},
		{"parent and child", []table.Update{table.Set{Path: "data", Value: map[string]any{}}, table.Set{Path: "data.n", Value: 1}}},
		{"change the sort key", []table.Update{table.Set{Path: table.AttrSK, Value: "other"}}},
	} {
		_, err := tb.Update(ctx, key(pk, "I"), c.updates, nil)
		if !errors.Is(err, table.ErrInvalidUpdate) || errors.Is(err, table.ErrConditionFailed) {
			t.Errorf("%s: err = %v, want ErrInvalidUpdate", c.name, err)
		}
	}
	WantEqual(t, "unchanged", MustGet(t, tb, key(pk, "I")), table.Item{
		table.AttrPK: pk, table.AttrSK: "I", "data": map[string]any{"s": "x", "n": 1.0},
	})
}

// testConcurrentAdd: atomic counters do not lose increments.
func testConcurrentAdd(t *testing.T, tb table.Table, cfg Config) {
	pk := newPK("add")
	const workers, each = 10, 5
	resentBefore := cfg.resent()
	cfg.Race(workers, func(int) {
		for range each {
			if _, err := tb.Update(t.Context(), key(pk, "C"), []table.Update{table.Add{Path: "n", Delta: 1}}, nil); err != nil {
				t.Errorf("Add: %v", err)
			}
		}
	})
	// An Update is not idempotent: one whose answer was lost, sent again by
	// the client, adds twice (on DynamoDB too, which is why exact counters
	// go through Transact, whose token makes a resend apply once). Each
	// resend, this test's or another's meanwhile, may account for one more.
	want := workers * each
	resent := cfg.resent() - resentBefore
	n, _ := MustGet(t, tb, key(pk, "C"))["n"].(float64)
	if n < float64(want) || n > float64(want+resent) {
		t.Fatalf("counter = %v, want %d (requests resent meanwhile: %d)", n, want, resent)
	}
}

func testDelete(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("delete")
	MustPut(t, tb, item(pk, "D", "v", "a"))
	wantCondFailed(t, "guarded delete", tb.Delete(ctx, key(pk, "D"), table.Equals{Path: "v", Value: "b"}))
	MustGet(t, tb, key(pk, "D"))
	if err := tb.Delete(ctx, key(pk, "D"), table.Equals{Path: "v", Value: "a"}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	WantMissing(t, tb, key(pk, "D"))
	if err := tb.Delete(ctx, key(pk, "D"), nil); err != nil {
		t.Fatalf("Delete of a missing item: %v", err)
	}
	wantCondFailed(t, "Delete requiring existence", tb.Delete(ctx, key(pk, "D"), table.Exists{Path: table.AttrPK}))
}

// ---- queries ----

func testQuery(t *testing.T, tb table.Table, _ Config) {
	pk := newPK("query")
	for _, sk := range []string{"SEG#000002", "SEG#000010", "SEG#000001", "STEP", "TRANSITION#01", "TRANSITION#02", "SEG#", "SEG"} {
		MustPut(t, tb, item(pk, sk))
	}
	MustPut(t, tb, item(pk+"x", "SEG#000003")) // another partition
	check := func(q table.Query, want ...string) {
		t.Helper()
		q.PK = pk
		if got := sks(QueryAll(t, tb, q)); !slices.Equal(got, want) {
			t.Errorf("Query %+v = %v, want %v", q, got, want)
		}
	}
	check(table.Query{}, "SEG", "SEG#", "SEG#000001", "SEG#000002", "SEG#000010", "STEP", "TRANSITION#01", "TRANSITION#02")
	check(table.Query{SKPrefix: "SEG#"}, "SEG#", "SEG#000001", "SEG#000002", "SEG#000010")
	check(table.Query{SKPrefix: "SEG#", Reverse: true}, "SEG#000010", "SEG#000002", "SEG#000001", "SEG#")
	check(table.Query{SKPrefix: "TRANSITION#"}, "TRANSITION#01", "TRANSITION#02")
	check(table.Query{SKPrefix: "NOPE"})
	check(table.Query{SKFrom: "SEG#000001", SKTo: "SEG#000002"}, "SEG#000001", "SEG#000002")
	check(table.Query{SKFrom: "SEG#000001", SKTo: "SEG#000009", Reverse: true}, "SEG#000002", "SEG#000001")
	check(table.Query{SKFrom: "STEP"}, "STEP", "TRANSITION#01", "TRANSITION#02")
	check(table.Query{SKTo: "SEG#"}, "SEG", "SEG#")
	check(table.Query{SKPrefix: "SEG#", Limit: 2}, "SEG#", "SEG#000001", "SEG#000002", "SEG#000010")

	page, err := tb.Query(t.Context(), table.Query{PK: pk, SKPrefix: "SEG#", Limit: 3, Reverse: true})
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	if got := sks(page.Items); !slices.Equal(got, []string{"SEG#000010", "SEG#000002", "SEG#000001"}) || page.Next == "" {
		t.Fatalf("first page = %v, next %q; want three newest and a token", got, page.Next)
	}
	if page, err := tb.Query(t.Context(), table.Query{PK: newPK("empty")}); err != nil || len(page.Items) != 0 || page.Next != "" {
		t.Fatalf("Query of an empty partition = %+v, %v", page, err)
	}
}

func testQueryPaging(t *testing.T, tb table.Table, _ Config) {
	pk := newPK("paging")
	const n = 53
	var want []string
	for i := range n {
		sk := fmt.Sprintf("SEG#%06d", i)
		want = append(want, sk)
		MustPut(t, tb, item(pk, sk, "i", i))
	}
	for _, limit := range []int{1, 7, 53, 100} {
		got := sks(QueryAll(t, tb, table.Query{PK: pk, SKPrefix: "SEG#", Limit: limit}))
		if !slices.Equal(got, want) {
			t.Errorf("paging forward with limit %d = %v", limit, got)
		}
		got = sks(QueryAll(t, tb, table.Query{PK: pk, SKPrefix: "SEG#", Limit: limit, Reverse: true}))
		if !slices.Equal(got, reversed(want)) {
			t.Errorf("paging backward with limit %d = %v", limit, got)
		}
	}
	// Items written between pages show up in order on later pages.
	page, err := tb.Query(t.Context(), table.Query{PK: pk, SKPrefix: "SEG#", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	MustPut(t, tb, item(pk, "SEG#999999"))
	rest := QueryAll(t, tb, table.Query{PK: pk, SKPrefix: "SEG#", Limit: 10, PageToken: page.Next})
	if got := sks(rest); len(got) != n-10+1 || got[0] != want[10] || got[len(got)-1] != "SEG#999999" {
		t.Errorf("pages after a write = %v", got)
	}
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func testQueryIndexes(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	g1, g2 := newPK("gsi1"), newPK("gsi2")
	base := newPK("base")
	MustPut(t, tb, item(base, "A", table.AttrGSI1PK, g1, table.AttrGSI1SK, "in_progress#2024-01-02#a"))
	MustPut(t, tb, item(base, "B", table.AttrGSI1PK, g1, table.AttrGSI1SK, "in_progress#2024-01-03#b"))
	MustPut(t, tb, item(base, "C", table.AttrGSI1PK, g1, table.AttrGSI1SK, "failed#2024-01-01#c"))
	MustPut(t, tb, item(base, "D"))                       // in no index
	MustPut(t, tb, item(base, "E", table.AttrGSI1PK, g1)) // half a key: in no index
	MustPut(t, tb, item(base, "F", table.AttrGSI2PK, g2, table.AttrGSI2SK, "DOC#1"))
	MustPut(t, tb, item(base+"2", "F", table.AttrGSI2PK, g2, table.AttrGSI2SK, "DOC#2"))

	check := func(q table.Query, want ...string) {
		t.Helper()
		var got []string
		for _, it := range QueryAll(t, tb, q) {
			got = append(got, it.Key().String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("Query %+v = %v, want %v", q, got, want)
		}
	}
	k := func(pk, sk string) string { return key(pk, sk).String() }
	check(table.Query{Index: table.IndexGSI1, PK: g1}, k(base, "C"), k(base, "A"), k(base, "B"))
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKPrefix: "in_progress#", Reverse: true}, k(base, "B"), k(base, "A"))
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKPrefix: "in_progress#", Limit: 1}, k(base, "A"), k(base, "B"))
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKFrom: "failed#", SKTo: "failed#~"}, k(base, "C"))
	check(table.Query{Index: table.IndexGSI2, PK: g2}, k(base, "F"), k(base+"2", "F"))
	check(table.Query{Index: table.IndexGSI2, PK: g2, SKPrefix: "DOC#2"}, k(base+"2", "F"))

	// The index is sparse: removing the attribute drops the item from it,
	// setting it again brings it back under the new sort key.
	if _, err := tb.Update(ctx, key(base, "B"), []table.Update{table.Remove{Path: table.AttrGSI1PK}, table.Remove{Path: table.AttrGSI1SK}}, nil); err != nil {
		t.Fatal(err)
	}
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKPrefix: "in_progress#"}, k(base, "A"))
	if _, err := tb.Update(ctx, key(base, "A"), []table.Update{table.Set{Path: table.AttrGSI1SK, Value: "failed#2024-01-05#a"}}, nil); err != nil {
		t.Fatal(err)
	}
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKPrefix: "failed#", Reverse: true}, k(base, "A"), k(base, "C"))
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKPrefix: "in_progress#"})
	if err := tb.Delete(ctx, key(base, "C"), nil); err != nil {
		t.Fatal(err)
	}
	check(table.Query{Index: table.IndexGSI1, PK: g1}, k(base, "A"))
}

// testQueryIndexTies: items sharing an index sort key page without loss or
// repetition.
func testQueryIndexTies(t *testing.T, tb table.Table, _ Config) {
	g := newPK("ties")
	base := newPK("tiebase")
	const n = 12
	for i := range n {
		MustPut(t, tb, item(base, fmt.Sprintf("X%02d", i), table.AttrGSI2PK, g, table.AttrGSI2SK, "same"))
	}
	for _, reverse := range []bool{false, true} {
		seen := map[string]bool{}
		for _, it := range QueryAll(t, tb, table.Query{Index: table.IndexGSI2, PK: g, Limit: 5, Reverse: reverse}) {
			if seen[it.Key().SK] {
				t.Fatalf("reverse=%v: %s returned twice", reverse, it.Key().SK)
			}
			seen[it.Key().SK] = true
		}
		if len(seen) != n {
			t.Fatalf("reverse=%v: paged %d items, want %d", reverse, len(seen), n)
		}
	}
}

// testQueryCount: a CountOnly query counts the live items of the range on
// the base table and the indexes, returns none of them, and stops at Limit.
func testQueryCount(t *testing.T, tb table.Table, _ Config) {
	base, g1 := newPK("countbase"), newPK("count")
	const n = 30
	for i := range n {
		status := "in_progress"
		if i%3 == 0 {
			status = "failed"
		}
		MustPut(t, tb, item(base, fmt.Sprintf("S#%02d", i), table.AttrGSI1PK, g1, table.AttrGSI1SK, fmt.Sprintf("%s#%02d", status, i)))
	}
	MustPut(t, tb, item(base, "S#99", table.AttrTTL, expired(), table.AttrGSI1PK, g1, table.AttrGSI1SK, "failed#99"))
	MustPut(t, tb, item(base, "T#00"))

	check := func(q table.Query, want int) {
		t.Helper()
		q.CountOnly = true
		page, err := tb.Query(t.Context(), q)
		if err != nil {
			t.Fatalf("Query %+v: %v", q, err)
		}
		if page.Count != want || len(page.Items) != 0 || page.Next != "" {
			t.Errorf("Query %+v = count %d, %d items, next %q; want count %d alone", q, page.Count, len(page.Items), page.Next, want)
		}
	}
	check(table.Query{PK: base}, n+1)
	check(table.Query{PK: base, SKPrefix: "S#"}, n)
	check(table.Query{PK: base, SKFrom: "S#10", SKTo: "S#19"}, 10)
	check(table.Query{Index: table.IndexGSI1, PK: g1}, n)
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKPrefix: "failed#"}, n/3)
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKPrefix: "in_progress#", Reverse: true}, n-n/3)
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKPrefix: "in_progress#", Limit: 7}, 7)
	check(table.Query{Index: table.IndexGSI1, PK: g1, SKPrefix: "failed#", Limit: 50}, n/3)
	check(table.Query{Index: table.IndexGSI1, PK: newPK("empty")}, 0)
}

// ---- transactions ----

func testTransactCommits(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("tx")
	MustPut(t, tb, item(pk, "U", "n", 1))
	MustPut(t, tb, item(pk, "D"))
	MustPut(t, tb, item(pk, "C", "state", "open"))
	err := tb.Transact(ctx, []table.TxAction{
		table.TxPut{Item: item(pk, "P", "v", "new"), Cond: table.NotExists{Path: table.AttrPK}},
		table.TxUpdate{Key: key(pk, "U"), Updates: []table.Update{table.Add{Path: "n", Delta: 1}}, Cond: table.Equals{Path: "n", Value: 1}},
		table.TxDelete{Key: key(pk, "D"), Cond: table.Exists{Path: table.AttrPK}},
		table.TxCheck{Key: key(pk, "C"), Cond: table.Equals{Path: "state", Value: "open"}},
		table.TxUpdate{Key: key(pk, "NEW"), Updates: []table.Update{table.Set{Path: "v", Value: 1}}},
	})
	if err != nil {
		t.Fatalf("Transact: %v", err)
	}
	WantEqual(t, "put", MustGet(t, tb, key(pk, "P")), item(pk, "P", "v", "new"))
	WantEqual(t, "updated", MustGet(t, tb, key(pk, "U")), item(pk, "U", "n", 2.0))
	WantMissing(t, tb, key(pk, "D"))
	WantEqual(t, "checked", MustGet(t, tb, key(pk, "C")), item(pk, "C", "state", "open"))
	WantEqual(t, "upserted", MustGet(t, tb, key(pk, "NEW")), item(pk, "NEW", "v", 1.0))

	// The largest transaction every driver takes.
	pk2 := newPK("txmax")
	actions := make([]table.TxAction, table.MaxTransactItems)
	for i := range actions {
		actions[i] = table.TxPut{Item: item(pk2, fmt.Sprintf("I%03d", i))}
	}
	if err := tb.Transact(ctx, actions); err != nil {
		t.Fatalf("Transact of %d puts: %v", table.MaxTransactItems, err)
	}
	if got := len(QueryAll(t, tb, table.Query{PK: pk2})); got != table.MaxTransactItems {
		t.Fatalf("after a full transaction %d items, want %d", got, table.MaxTransactItems)
	}
}

func testTransactAtomic(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("txatomic")
	MustPut(t, tb, item(pk, "U", "n", 1))
	MustPut(t, tb, item(pk, "D"))
	MustPut(t, tb, item(pk, "C", "state", "closed"))
	before := QueryAll(t, tb, table.Query{PK: pk})

	for _, c := range []struct {
		name   string
		failed []bool
		acts   []table.TxAction
	}{
		{"check fails", []bool{false, false, false, true}, []table.TxAction{
			table.TxPut{Item: item(pk, "P"), Cond: table.NotExists{Path: table.AttrPK}},
			table.TxUpdate{Key: key(pk, "U"), Updates: []table.Update{table.Add{Path: "n", Delta: 1}}},
			table.TxDelete{Key: key(pk, "D")},
			table.TxCheck{Key: key(pk, "C"), Cond: table.Equals{Path: "state", Value: "open"}},
		}},
		{"put on existing and update fail", []bool{true, true, false}, []table.TxAction{
			table.TxPut{Item: item(pk, "U"), Cond: table.NotExists{Path: table.AttrPK}},
			table.TxUpdate{Key: key(pk, "D"), Updates: []table.Update{table.Set{Path: "x", Value: 1}}, Cond: table.Equals{Path: "x", Value: 0}},
			table.TxPut{Item: item(pk, "Q")},
		}},
		{"put on existing after fresh puts", []bool{false, false, false, true}, []table.TxAction{
			table.TxPut{Item: item(pk, "P"), Cond: table.NotExists{Path: table.AttrPK}},
			table.TxPut{Item: item(pk, "P2"), Cond: table.NotExists{Path: table.AttrPK}},
			table.TxUpdate{Key: key(pk, "U"), Updates: []table.Update{table.Add{Path: "n", Delta: 1}}},
			table.TxPut{Item: item(pk, "D", "v", "replaced"), Cond: table.NotExists{Path: table.AttrPK}},
		}},
		{"delete of missing guarded", []bool{false, true}, []table.TxAction{
			table.TxUpdate{Key: key(pk, "U"), Updates: []table.Update{table.Set{Path: "n", Value: 100}}},
			table.TxDelete{Key: key(pk, "GONE"), Cond: table.Exists{Path: table.AttrPK}},
		}},
	} {
		err := tb.Transact(ctx, c.acts)
		var tx *table.TxCanceledError
		if !errors.As(err, &tx) || !errors.Is(err, table.ErrConditionFailed) {
			t.Fatalf("%s: err = %v, want *TxCanceledError matching ErrConditionFailed", c.name, err)
		}
		if !slices.Equal(tx.Failed, c.failed) {
			t.Errorf("%s: Failed = %v, want %v", c.name, tx.Failed, c.failed)
		}
		if after := QueryAll(t, tb, table.Query{PK: pk}); !reflect.DeepEqual(after, before) {
			t.Fatalf("%s: a canceled transaction wrote: %v, was %v", c.name, after, before)
		}
	}
}

func testTransactInvalid(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("txinvalid")
	if err := tb.Transact(ctx, []table.TxAction{
		table.TxPut{Item: item(pk, "A")},
		table.TxUpdate{Key: key(pk, "A"), Updates: []table.Update{table.Set{Path: "x", Value: 1}}},
	}); err == nil || errors.Is(err, table.ErrConditionFailed) {
		t.Errorf("two actions on one item: err = %v, want a validation error", err)
	}
	tooMany := make([]table.TxAction, table.MaxTransactItems+1)
	for i := range tooMany {
		tooMany[i] = table.TxPut{Item: item(pk, fmt.Sprintf("I%03d", i))}
	}
	if err := tb.Transact(ctx, tooMany); err == nil {
		t.Errorf("transaction of %d actions succeeded", len(tooMany))
	}
	if got := QueryAll(t, tb, table.Query{PK: pk}); len(got) != 0 {
		t.Fatalf("rejected transactions wrote %v", sks(got))
	}
}

// ---- ttl ----

func testTTL(t *testing.T, tb table.Table, _ Config) {
	ctx := t.Context()
	pk := newPK("ttl")
	g := newPK("ttlindex")
	MustPut(t, tb, item(pk, "OLD", table.AttrTTL, expired(), table.AttrGSI1PK, g, table.AttrGSI1SK, "old", "v", "old"))
	MustPut(t, tb, item(pk, "LIVE", table.AttrTTL, future(), table.AttrGSI1PK, g, table.AttrGSI1SK, "live"))
	MustPut(t, tb, item(pk, "NOTTL", table.AttrGSI1PK, g, table.AttrGSI1SK, "nottl"))

	WantMissing(t, tb, key(pk, "OLD"))
	MustGet(t, tb, key(pk, "LIVE"))
	if got := sks(QueryAll(t, tb, table.Query{PK: pk})); !slices.Equal(got, []string{"LIVE", "NOTTL"}) {
		t.Fatalf("Query sees %v, want the unexpired items", got)
	}
	if got := sks(QueryAll(t, tb, table.Query{Index: table.IndexGSI1, PK: g})); !slices.Equal(got, []string{"LIVE", "NOTTL"}) {
		t.Fatalf("index query sees %v, want the unexpired items", got)
	}
	// Conditions treat an expired item as absent.
	_, err := tb.Update(ctx, key(pk, "OLD"), []table.Update{table.Set{Path: "v", Value: "x"}}, table.Exists{Path: table.AttrPK})
	wantCondFailed(t, "update of an expired item", err)
	err = tb.Transact(ctx, []table.TxAction{table.TxCheck{Key: key(pk, "OLD"), Cond: table.Equals{Path: "v", Value: "old"}}})
	wantCondFailed(t, "check on an expired item", err)
	if err := tb.Put(ctx, item(pk, "OLD", "v", "reborn"), table.NotExists{Path: table.AttrPK}); err != nil {
		t.Fatalf("create over an expired item: %v", err)
	}
	WantEqual(t, "recreated", MustGet(t, tb, key(pk, "OLD")), item(pk, "OLD", "v", "reborn"))
	// Expiring a live item hides it at once.
	if _, err := tb.Update(ctx, key(pk, "LIVE"), []table.Update{table.Set{Path: table.AttrTTL, Value: expired()}}, nil); err != nil {
		t.Fatal(err)
	}
	WantMissing(t, tb, key(pk, "LIVE"))
}
