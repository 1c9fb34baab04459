package dynamotable_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// losingClient sends every request, but drops the answer to the next one
// of the armed operation, as a connection reset after the service
// committed would: the SDK then resends it.
type losingClient struct {
	next aws.HTTPClient
	mu   sync.Mutex
	lose string // operation whose next answer is lost, "" for none
	lost int
}

func (c *losingClient) arm(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lose = op
}

func (c *losingClient) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.next.Do(req)
	if err != nil {
		return resp, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lose != "" && strings.HasSuffix(req.Header.Get("X-Amz-Target"), "."+c.lose) {
		c.lose = ""
		c.lost++
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer")
	}
	return resp, nil
}

func newLosingTable(t *testing.T) (*dynamotable.Table, *losingClient) {
	t.Helper()
	cfg := awstest.Config(t) // skips without an endpoint
	lc := &losingClient{next: cfg.HTTPClient}
	cfg.HTTPClient = lc
	client := dynamodb.NewFromConfig(cfg)
	return dynamotable.New(client, awstest.Table(t, client)), lc
}

// A create whose answer was lost is resent; the resend must not report
// that the item it made already exists.
func TestPutWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	tb, lc := newLosingTable(t)
	ctx := t.Context()
	item := table.Item{table.AttrPK: "P#lost", table.AttrSK: "META", "data": map[string]any{"n": 1.0, "s": "ü"}}
	lc.arm("PutItem")
	if err := tb.Put(ctx, item, table.NotExists{Path: table.AttrPK}); err != nil {
		t.Fatalf("create whose answer was lost: %v", err)
	}
	if lc.lost != 1 {
		t.Fatalf("%d answers lost, want 1", lc.lost)
	}
	got, err := tb.Get(ctx, item.Key())
	if err != nil || got["data"].(map[string]any)["s"] != "ü" {
		t.Fatalf("stored %v (%v)", got, err)
	}
	// Another item under the key is still a failed condition, resent or not.
	other := table.Item{table.AttrPK: "P#lost", table.AttrSK: "META", "data": map[string]any{"n": 2.0}}
	lc.arm("PutItem")
	if err := tb.Put(ctx, other, table.NotExists{Path: table.AttrPK}); !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("create over another item, resent: %v, want ErrConditionFailed", err)
	}
	if err := tb.Put(ctx, other, table.NotExists{Path: table.AttrPK}); !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("create over another item: %v, want ErrConditionFailed", err)
	}
}

// A transaction whose answer was lost is resent; it must report success,
// and its counter must be added once.
func TestTransactWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	tb, lc := newLosingTable(t)
	ctx := t.Context()
	counter := table.Key{PK: "P#tx", SK: "COUNT"}
	create := func(sk string) []table.TxAction {
		return []table.TxAction{
			table.TxPut{Item: table.Item{table.AttrPK: "P#tx", table.AttrSK: sk, "data": "x"}, Cond: table.NotExists{Path: table.AttrPK}},
			table.TxPut{Item: table.Item{table.AttrPK: "P#tx", table.AttrSK: sk + "#2"}},
			table.TxUpdate{Key: counter, Updates: []table.Update{table.Add{Path: "n", Delta: 1}}},
		}
	}
	lc.arm("TransactWriteItems")
	if err := tb.Transact(ctx, create("A")); err != nil {
		t.Fatalf("transaction whose answer was lost: %v", err)
	}
	if lc.lost != 1 {
		t.Fatalf("%d answers lost, want 1", lc.lost)
	}
	got, err := tb.Get(ctx, counter)
	if err != nil || got["n"] != 1.0 {
		t.Fatalf("counter %v (%v), want 1: the transaction applied twice or not at all", got["n"], err)
	}
	// Against items of another writer, a resent transaction still fails.
	if err := tb.Put(ctx, table.Item{table.AttrPK: "P#tx", table.AttrSK: "B", "data": "other"}, nil); err != nil {
		t.Fatal(err)
	}
	lc.arm("TransactWriteItems")
	if err := tb.Transact(ctx, create("B")); !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("resent transaction over another writer's item: %v, want ErrConditionFailed", err)
	}
	if got, _ := tb.Get(ctx, counter); got["n"] != 1.0 {
		t.Fatalf("counter %v after a refused transaction, want 1", got["n"])
	}
}

// An update whose answer was lost is resent; an Add must count once, and
// a conditional update must not fail the condition it made false itself.
func TestUpdateWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	tb, lc := newLosingTable(t)
	ctx := t.Context()
	k := table.Key{PK: "P#up", SK: "COUNT"}
	for range 2 {
		lc.arm("UpdateItem")
		got, err := tb.Update(ctx, k, []table.Update{table.Add{Path: "n", Delta: 1}}, nil)
		if err != nil {
			t.Fatalf("add whose answer was lost: %v", err)
		}
		if _, ok := got["_write"]; ok || len(got) != 3 {
			t.Errorf("update returned %v: the driver's own attribute shows", got)
		}
	}
	if lc.lost != 2 {
		t.Fatalf("%d answers lost, want 2", lc.lost)
	}
	got, err := tb.Get(ctx, k)
	if err != nil || got["n"] != 2.0 {
		t.Fatalf("counter %v (%v), want 2: an add applied twice or not at all", got, err)
	}
	if _, ok := got["_write"]; ok {
		t.Errorf("get returned %v: the driver's own attribute shows", got)
	}
	lc.arm("UpdateItem")
	move := []table.Update{table.Set{Path: "state", Value: "done"}, table.Add{Path: "n", Delta: 1}}
	if _, err := tb.Update(ctx, k, move, table.NotExists{Path: "state"}); err != nil {
		t.Fatalf("conditional update whose answer was lost: %v", err)
	}
	if got, _ := tb.Get(ctx, k); got["n"] != 3.0 || got["state"] != "done" {
		t.Fatalf("item %v, want n 3 and state done", got)
	}
	// The same change again is another writer's, resent or not: refused.
	lc.arm("UpdateItem")
	if _, err := tb.Update(ctx, k, move, table.NotExists{Path: "state"}); !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("update whose condition another write made false, resent: %v, want ErrConditionFailed", err)
	}
}

// A transaction that moves an item by a conditional update, with its
// audit record beside it, is resent when its answer is lost; the resend
// meets the state it made itself and must report success. Another
// writer's identical move is still refused.
func TestTransactMoveWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	tb, lc := newLosingTable(t)
	ctx := t.Context()
	k := table.Key{PK: "P#move", SK: "STEPS"}
	if err := tb.Put(ctx, table.Item{table.AttrPK: k.PK, table.AttrSK: k.SK, "state": "pending"}, nil); err != nil {
		t.Fatal(err)
	}
	move := func(from, to, audit string) []table.TxAction {
		return []table.TxAction{
			table.TxUpdate{Key: k, Updates: []table.Update{table.Set{Path: "state", Value: to}, table.Add{Path: "moves", Delta: 1}}, Cond: table.Equals{Path: "state", Value: from}},
			table.TxPut{Item: table.Item{table.AttrPK: k.PK, table.AttrSK: "AUDIT#" + audit}, Cond: table.NotExists{Path: table.AttrPK}},
		}
	}
	lc.arm("TransactWriteItems")
	if err := tb.Transact(ctx, move("pending", "running", "1")); err != nil {
		t.Fatalf("move whose answer was lost: %v", err)
	}
	// Without an audit item, only the update can tell the resend.
	lc.arm("TransactWriteItems")
	if err := tb.Transact(ctx, move("running", "done", "2")[:1]); err != nil {
		t.Fatalf("move without an audit item whose answer was lost: %v", err)
	}
	// An unconditional add, resent, must count once.
	lc.arm("TransactWriteItems")
	if err := tb.Transact(ctx, []table.TxAction{table.TxUpdate{Key: k, Updates: []table.Update{table.Add{Path: "moves", Delta: 1}}}}); err != nil {
		t.Fatalf("add whose answer was lost: %v", err)
	}
	if lc.lost != 3 {
		t.Fatalf("%d answers lost, want 3", lc.lost)
	}
	got, err := tb.Get(ctx, k)
	if err != nil || got["state"] != "done" || got["moves"] != 3.0 {
		t.Fatalf("item %v (%v), want state done after 3 counted moves", got, err)
	}
	if _, ok := got["_write"]; ok {
		t.Errorf("get returned %v: the driver's own attribute shows", got)
	}
	// The same move again is another writer's, resent or not: refused.
	lc.arm("TransactWriteItems")
	if err := tb.Transact(ctx, move("running", "done", "3")); !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("move another write made stale, resent: %v, want ErrConditionFailed", err)
	}
	if got, _ := tb.Get(ctx, k); got["moves"] != 3.0 {
		t.Fatalf("moves %v after a refused move, want 3", got["moves"])
	}
}
