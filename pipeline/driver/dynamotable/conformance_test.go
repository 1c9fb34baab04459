package dynamotable_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/repotest"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

// resendCounter counts the retries of a client, to tell a resent request
// from a lost update.
type resendCounter struct {
	aws.RetryerV2
	n *atomic.Int64
}

func (r resendCounter) RetryDelay(attempt int, err error) (time.Duration, error) {
	r.n.Add(1)
	return r.RetryerV2.RetryDelay(attempt, err)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	var resent atomic.Int64
	client := awstest.DynamoDB(t, func(o *dynamodb.Options) { // skips without an endpoint
		o.Retryer = resendCounter{RetryerV2: o.Retryer.(aws.RetryerV2), n: &resent}
	})
	count := tabletest.CountingResends(func() int { return int(resent.Load()) })
	// A table per subtest, although the suite could share one: moto copies
	// a whole table (stream records included) on every transaction, so one
	// shared table makes the suite quadratic there.
	newTable := func(t *testing.T) table.Table {
		return dynamotable.New(client, awstest.Table(t, client))
	}
	tabletest.Exercise(t, newTable, tabletest.Reduced(), count)
	repotest.Exercise(t, newTable, tabletest.Reduced(), count)
}
