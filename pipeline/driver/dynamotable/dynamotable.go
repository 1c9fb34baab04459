// Package dynamotable implements table.Table on one DynamoDB table laid out
// for the single-table design: string PK/SK, two GSIs, a stream and TTL.
package dynamotable

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/docpipe/docpipe/pipeline/table"
)

// DefaultLimit is the page size of a Query that does not set one.
const DefaultLimit = 100

// Table is a table.Table backed by DynamoDB. It is safe for concurrent use.
type Table struct {
	client *dynamodb.Client
	name   string
	now    func() time.Time
}

var _ table.Table = (*Table)(nil)

// Option configures a Table.
type Option func(*Table)

// WithClock replaces time.Now for deciding whether an item's ttl has passed;
// tests use it to expire items without waiting.
func WithClock(now func() time.Time) Option {
	return func(t *Table) { t.now = now }
}

// New returns a Table on the existing DynamoDB table tableName.
func New(client *dynamodb.Client, tableName string, opts ...Option) *Table {
	t := &Table{client: client, name: tableName, now: time.Now}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Name returns the DynamoDB table name.
func (t *Table) Name() string { return t.name }

// NewRetryer returns the SDK's standard retryer tuned for a pipeline that
// fans out against one table: more attempts and a longer backoff ceiling, so
// that throttling during a burst is waited out instead of failing a step, and
// no client-side retry quota, which would otherwise turn a long burst of
// throttles into errors. Use it as aws.Config.Retryer or a client's Retryer.
func NewRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = 10
		o.MaxBackoff = 20 * time.Second
		o.RateLimiter = ratelimit.None
	})
}

// indexKeys returns the partition and sort key attributes of an index.
func indexKeys(index string) (pk, sk string, err error) {
	switch index {
	case table.IndexTable:
		return table.AttrPK, table.AttrSK, nil
	case table.IndexGSI1:
		return table.AttrGSI1PK, table.AttrGSI1SK, nil
	case table.IndexGSI2:
		return table.AttrGSI2PK, table.AttrGSI2SK, nil
	}
	return "", "", fmt.Errorf("dynamotable: unknown index %q", index)
}

func (t *Table) nowUnix() int64 { return t.now().Unix() }
