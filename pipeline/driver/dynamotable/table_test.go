package dynamotable_test

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/docpipe/docpipe/pipeline/driver/awscount"
	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/table"
)

// fakeClock is a settable clock for expiry tests.
type fakeClock struct{ unix atomic.Int64 }

func (c *fakeClock) Now() time.Time { return time.Unix(c.unix.Load(), 0) }

type bundle struct {
	client  *dynamodb.Client
	name    string
	tb      *dynamotable.Table
	clock   *fakeClock
	counter *awscount.Counter
}

// setup makes a fresh table whose clock the test controls and whose
// requests are counted.
func setup(t *testing.T, opts ...dynamotable.Option) *bundle {
	return setupTable(t, nil, opts...)
}

func setupTable(t *testing.T, create []dynamotable.CreateOption, opts ...dynamotable.Option) *bundle {
	t.Helper()
	b := &bundle{clock: &fakeClock{}, counter: &awscount.Counter{}}
	b.clock.unix.Store(time.Now().Unix())
	b.client = awstest.DynamoDB(t, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, b.counter.AddTo)
	})
	b.name = awstest.Table(t, b.client, create...)
	b.tb = dynamotable.New(b.client, b.name, append([]dynamotable.Option{dynamotable.WithClock(b.clock.Now)}, opts...)...)
	return b
}

func TestCreateTableLayout(t *testing.T) {
	t.Parallel()
	b := setupTable(t, []dynamotable.CreateOption{}) // the full layout, stream included
	ctx := t.Context()
	out, err := b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(b.name)})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	if d.BillingModeSummary == nil || d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing mode %+v, want PAY_PER_REQUEST", d.BillingModeSummary)
	}
	if d.StreamSpecification == nil || !aws.ToBool(d.StreamSpecification.StreamEnabled) ||
		d.StreamSpecification.StreamViewType != types.StreamViewTypeNewAndOldImages {
		t.Errorf("stream %+v, want NEW_AND_OLD_IMAGES", d.StreamSpecification)
	}
	keys := func(ks []types.KeySchemaElement) string {
		return fmt.Sprintf("%s/%s", aws.ToString(ks[0].AttributeName), aws.ToString(ks[1].AttributeName))
	}
	if got := keys(d.KeySchema); got != "PK/SK" {
		t.Errorf("table keys %s", got)
	}
	gsis := map[string]string{}
	for _, g := range d.GlobalSecondaryIndexes {
		if g.Projection == nil || g.Projection.ProjectionType != types.ProjectionTypeAll {
			t.Errorf("index %s projection %+v, want ALL", aws.ToString(g.IndexName), g.Projection)
		}
		gsis[aws.ToString(g.IndexName)] = keys(g.KeySchema)
	}
	if want := map[string]string{"GSI1": "GSI1PK/GSI1SK", "GSI2": "GSI2PK/GSI2SK"}; !reflect.DeepEqual(gsis, want) {
		t.Errorf("indexes %v, want %v", gsis, want)
	}
	ttl, err := b.client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(b.name)})
	if err != nil {
		t.Fatal(err)
	}
	if s := ttl.TimeToLiveDescription; s == nil || aws.ToString(s.AttributeName) != table.AttrTTL ||
		(s.TimeToLiveStatus != types.TimeToLiveStatusEnabled && s.TimeToLiveStatus != types.TimeToLiveStatusEnabling) {
		t.Errorf("ttl %+v, want enabled on %q", s, table.AttrTTL)
	}
	// Repeating it is harmless.
	if err := dynamotable.CreateTable(ctx, b.client, b.name); err != nil {
		t.Errorf("second CreateTable: %v", err)
	}
}

func TestExpiryFollowsClock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	now := b.clock.unix.Load()
	k := table.Key{PK: "P#ttl", SK: "A"}
	if err := b.tb.Put(ctx, table.Item{table.AttrPK: k.PK, table.AttrSK: k.SK, table.AttrTTL: now + 60, "v": 1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.tb.Get(ctx, k); err != nil {
		t.Fatalf("live item: %v", err)
	}
	b.clock.unix.Store(now + 60) // ttl == now: expired
	if _, err := b.tb.Get(ctx, k); !errors.Is(err, table.ErrNotFound) {
		t.Fatalf("expired Get: %v, want ErrNotFound", err)
	}
	page, err := b.tb.Query(ctx, table.Query{PK: k.PK})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("expired Query: %v items, err %v", len(page.Items), err)
	}
	// Conditions see the expired item as absent, though DynamoDB still holds it.
	_, err = b.tb.Update(ctx, k, []table.Update{table.Set{Path: "v", Value: 2}}, table.Exists{Path: table.AttrPK})
	if !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("Update requiring the expired item: %v, want ErrConditionFailed", err)
	}
	if err := b.tb.Transact(ctx, []table.TxAction{table.TxCheck{Key: k, Cond: table.Equals{Path: "v", Value: 1}}}); !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("TxCheck on the expired item: %v, want ErrConditionFailed", err)
	}
	fresh := table.Item{table.AttrPK: k.PK, table.AttrSK: k.SK, "v": 3}
	if err := b.tb.Put(ctx, fresh, table.NotExists{Path: table.AttrPK}); err != nil {
		t.Fatalf("create over the expired item: %v", err)
	}
	got, err := b.tb.Get(ctx, k)
	if err != nil || !reflect.DeepEqual(got, table.Item{table.AttrPK: k.PK, table.AttrSK: k.SK, "v": 3.0}) {
		t.Fatalf("after re-create: %v, %v", got, err)
	}
	// And a live item still fails the same create.
	if err := b.tb.Put(ctx, fresh, table.NotExists{Path: table.AttrPK}); !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("create over a live item: %v, want ErrConditionFailed", err)
	}
}

// DynamoDB applies Limit before the expiry filter: a page must still fill
// up from behind a run of expired items, and Next must be empty exactly on
// the last page.
func TestQueryPagesPastExpiredItems(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	now := b.clock.unix.Load()
	const pk = "P#paging"
	var live []string
	for i := range 30 {
		it := table.Item{table.AttrPK: pk, table.AttrSK: fmt.Sprintf("S#%03d", i)}
		if i%10 < 6 { // runs of six expired items, longer than the page
			it[table.AttrTTL] = now - 1
		} else {
			live = append(live, it.Key().SK)
		}
		if err := b.tb.Put(ctx, it, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, reverse := range []bool{false, true} {
		var got []string
		q := table.Query{PK: pk, Limit: 4, Reverse: reverse}
		pages := 0
		for {
			page, err := b.tb.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(page.Items) > q.Limit || (page.Next != "" && len(page.Items) != q.Limit) {
				t.Fatalf("page of %d items with Next %q", len(page.Items), page.Next)
			}
			for _, it := range page.Items {
				got = append(got, it.Key().SK)
			}
			if page.Next == "" {
				break
			}
			q.PageToken = page.Next
		}
		want := append([]string(nil), live...)
		if reverse {
			for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
				want[i], want[j] = want[j], want[i]
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("reverse=%v: got %v, want %v", reverse, got, want)
		}
		if pages != 3 { // 12 live items, 4 a page, no trailing empty page
			t.Errorf("reverse=%v: %d pages, want 3", reverse, pages)
		}
	}
}

func TestNestedCountersAndPaths(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	k := table.Key{PK: "WF#1", SK: "STEP"}
	// Add on a nested path of a missing item needs the parent, as a Set does.
	_, err := b.tb.Update(ctx, k, []table.Update{table.Add{Path: "data.segments_done", Delta: 1}}, nil)
	if !errors.Is(err, table.ErrInvalidUpdate) {
		t.Fatalf("Add below a missing parent: %v, want ErrInvalidUpdate", err)
	}
	if _, err := b.tb.Update(ctx, k, []table.Update{table.Set{Path: "data", Value: map[string]any{"steps": map[string]any{}}}}, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := b.tb.Update(ctx, k, []table.Update{table.Add{Path: "data.segments_done", Delta: 2}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.tb.Update(ctx, k, []table.Update{
		table.Add{Path: "data.segments_failed", Delta: -1},
		table.Set{Path: "data.steps.ocr", Value: map[string]any{"status": "done"}},
	}, table.Equals{Path: "data.segments_done", Value: 6})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"segments_done": 6.0, "segments_failed": -1.0, "steps": map[string]any{"ocr": map[string]any{"status": "done"}}}
	if !reflect.DeepEqual(got.Data(), want) {
		t.Errorf("data = %#v, want %#v", got.Data(), want)
	}
	_, err = b.tb.Update(ctx, k, []table.Update{table.Add{Path: "data.steps.ocr.status", Delta: 1}}, nil)
	if !errors.Is(err, table.ErrInvalidUpdate) {
		t.Errorf("Add to a string: %v, want ErrInvalidUpdate", err)
	}
	_, err = b.tb.Update(ctx, k, []table.Update{table.Set{Path: "data.steps.ocr.status.at", Value: 1}}, table.Exists{Path: "data"})
	if !errors.Is(err, table.ErrInvalidUpdate) {
		t.Errorf("Set below a string: %v, want ErrInvalidUpdate", err)
	}
	// DynamoDB also refuses a REMOVE below a missing parent.
	_, err = b.tb.Update(ctx, k, []table.Update{table.Remove{Path: "missing.x"}}, nil)
	if !errors.Is(err, table.ErrInvalidUpdate) {
		t.Errorf("Remove below a missing parent: %v, want ErrInvalidUpdate", err)
	}
	// The caller's failed condition is reported as such, even when the
	// update would also have been invalid.
	_, err = b.tb.Update(ctx, k, []table.Update{table.Set{Path: "nope.x", Value: 1}}, table.NotExists{Path: table.AttrPK})
	if !errors.Is(err, table.ErrConditionFailed) {
		t.Errorf("failed condition and invalid update: %v, want ErrConditionFailed", err)
	}
	// In a transaction too, and the other actions are not applied.
	err = b.tb.Transact(ctx, []table.TxAction{
		table.TxPut{Item: table.Item{table.AttrPK: "WF#1", table.AttrSK: "OTHER"}},
		table.TxUpdate{Key: k, Updates: []table.Update{table.Add{Path: "data.steps.ocr.status", Delta: 1}}},
	})
	if !errors.Is(err, table.ErrInvalidUpdate) {
		t.Errorf("invalid update in a transaction: %v, want ErrInvalidUpdate", err)
	}
	if _, err := b.tb.Get(ctx, table.Key{PK: "WF#1", SK: "OTHER"}); !errors.Is(err, table.ErrNotFound) {
		t.Errorf("put of a canceled transaction: %v", err)
	}
}

func TestTransactReportsFailedActions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	put := func(sk string) table.Item { return table.Item{table.AttrPK: "P#tx", table.AttrSK: sk, "n": 1} }
	if err := b.tb.Put(ctx, put("A"), nil); err != nil {
		t.Fatal(err)
	}
	err := b.tb.Transact(ctx, []table.TxAction{
		table.TxPut{Item: put("B"), Cond: table.NotExists{Path: table.AttrPK}},                       // holds
		table.TxPut{Item: put("A"), Cond: table.NotExists{Path: table.AttrPK}},                       // fails
		table.TxUpdate{Key: put("C").Key(), Updates: []table.Update{table.Add{Path: "n", Delta: 1}}}, // no condition
		table.TxCheck{Key: put("D").Key(), Cond: table.Exists{Path: table.AttrPK}},                   // fails
	})
	var txe *table.TxCanceledError
	if !errors.As(err, &txe) || !errors.Is(err, table.ErrConditionFailed) {
		t.Fatalf("got %v, want a *TxCanceledError", err)
	}
	if want := []bool{false, true, false, true}; !reflect.DeepEqual(txe.Failed, want) {
		t.Errorf("Failed = %v, want %v", txe.Failed, want)
	}
	for _, sk := range []string{"B", "C"} {
		if _, err := b.tb.Get(ctx, table.Key{PK: "P#tx", SK: sk}); !errors.Is(err, table.ErrNotFound) {
			t.Errorf("%s written by a canceled transaction: %v", sk, err)
		}
	}
	dup := []table.TxAction{table.TxCheck{Key: put("A").Key()}, table.TxDelete{Key: put("A").Key()}}
	before := b.counter.Total()
	if err := b.tb.Transact(ctx, dup); !errors.Is(err, table.ErrInvalidUpdate) {
		t.Errorf("two actions on one item: %v, want ErrInvalidUpdate", err)
	}
	if n := b.counter.Total() - before; n != 0 {
		t.Errorf("rejected transaction sent %d requests", n)
	}
}

// A page of an index carries the base-table key in its token: items with
// equal index sort keys must neither repeat nor go missing across pages.
func TestIndexPagingWithEqualSortKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	want := map[string]bool{}
	for i := range 9 {
		it := table.Item{table.AttrPK: fmt.Sprintf("DOC#%d", i), table.AttrSK: "META",
			table.AttrGSI2PK: "FILE#same", table.AttrGSI2SK: "DOC"}
		if err := b.tb.Put(ctx, it, nil); err != nil {
			t.Fatal(err)
		}
		want[it.Key().PK] = true
	}
	got := map[string]bool{}
	q := table.Query{Index: table.IndexGSI2, PK: "FILE#same", Limit: 2}
	for {
		page, err := b.tb.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if got[it.Key().PK] {
				t.Fatalf("%s returned twice", it.Key().PK)
			}
			got[it.Key().PK] = true
		}
		if q.PageToken = page.Next; q.PageToken == "" {
			break
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
