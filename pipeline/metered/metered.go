// Package metered counts the requests a pipeline run makes of its table and
// blob store. Every Table and Store method maps onto one AWS request
// (GetItem, PutItem, UpdateItem, DeleteItem, one Query page, BatchGetItem,
// TransactWriteItems; PutObject, GetObject, HeadObject, one ListObjectsV2
// page, DeleteObject), so counting them on a local run tells what the same
// run costs on DynamoDB and S3.
package metered

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/table"
)

// Counts are request totals by kind.
type Counts struct {
	TableReads  int64 `json:"table_reads"`  // Get and Query pages
	TableWrites int64 `json:"table_writes"` // Put, Update, Delete, Transact
	BlobPuts    int64 `json:"blob_puts"`
	BlobReads   int64 `json:"blob_reads"` // Get, Head, List
	BlobDeletes int64 `json:"blob_deletes"`
}

// Meter accumulates Counts; it is safe for concurrent use.
type Meter struct {
	tableReads, tableWrites       atomic.Int64
	blobPuts, blobReads, blobDels atomic.Int64
}

// Counts returns the totals so far.
func (m *Meter) Counts() Counts {
	return Counts{
		TableReads: m.tableReads.Load(), TableWrites: m.tableWrites.Load(),
		BlobPuts: m.blobPuts.Load(), BlobReads: m.blobReads.Load(), BlobDeletes: m.blobDels.Load(),
	}
}

// Table wraps t, counting on m.
func (m *Meter) Table(t table.Table) table.Table { return &meteredTable{next: t, m: m} }

// Store wraps s, counting on m.
func (m *Meter) Store(s blob.Store) blob.Store { return &meteredStore{next: s, m: m} }

type meteredTable struct {
	next table.Table
	m    *Meter
}

func (t *meteredTable) Get(ctx context.Context, key table.Key) (table.Item, error) {
	t.m.tableReads.Add(1)
	return t.next.Get(ctx, key)
}

// GetData counts one read, as Get does: it is the same GetItem.
func (t *meteredTable) GetData(ctx context.Context, key table.Key, v any) error {
	t.m.tableReads.Add(1)
	return table.GetData(ctx, t.next, key, v)
}

func (t *meteredTable) Put(ctx context.Context, item table.Item, cond table.Cond) error {
	t.m.tableWrites.Add(1)
	return t.next.Put(ctx, item, cond)
}

func (t *meteredTable) Update(ctx context.Context, key table.Key, updates []table.Update, cond table.Cond) (table.Item, error) {
	t.m.tableWrites.Add(1)
	return t.next.Update(ctx, key, updates, cond)
}

func (t *meteredTable) Delete(ctx context.Context, key table.Key, cond table.Cond) error {
	t.m.tableWrites.Add(1)
	return t.next.Delete(ctx, key, cond)
}

func (t *meteredTable) Query(ctx context.Context, q table.Query) (table.Page, error) {
	t.m.tableReads.Add(1)
	return t.next.Query(ctx, q)
}

func (t *meteredTable) Transact(ctx context.Context, actions []table.TxAction) error {
	t.m.tableWrites.Add(1)
	return t.next.Transact(ctx, actions)
}

type meteredStore struct {
	next blob.Store
	m    *Meter
}

func (s *meteredStore) Put(ctx context.Context, key string, r io.Reader) error {
	s.m.blobPuts.Add(1)
	return s.next.Put(ctx, key, r)
}

func (s *meteredStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	s.m.blobReads.Add(1)
	return s.next.Get(ctx, key)
}

func (s *meteredStore) Head(ctx context.Context, key string) (blob.Info, error) {
	s.m.blobReads.Add(1)
	return s.next.Head(ctx, key)
}

func (s *meteredStore) List(ctx context.Context, prefix string) ([]blob.Info, error) {
	s.m.blobReads.Add(1)
	return s.next.List(ctx, prefix)
}

func (s *meteredStore) Delete(ctx context.Context, key string) error {
	s.m.blobDels.Add(1)
	return s.next.Delete(ctx, key)
}

// Flush passes a durability barrier on to the store it wraps; it is not a
// request of its own.
func (s *meteredStore) Flush(ctx context.Context) error { return blob.Flush(ctx, s.next) }

// GetManyData counts one read when the table reads many items in one
// request (BatchGetItem), else one per key, as the reads are made.
func (t *meteredTable) GetManyData(ctx context.Context, keys []table.Key, data func(i int) any) ([]bool, error) {
	if _, many := t.next.(table.ManyGetter); many {
		t.m.tableReads.Add(1)
	} else {
		t.m.tableReads.Add(int64(len(keys)))
	}
	return table.GetManyData(ctx, t.next, keys, data)
}
