package dynamotable_test

import (
	"testing"

	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/repotest"
	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	client := awstest.DynamoDB(t) // skips without an endpoint
	// A table per subtest, although the suite could share one: moto copies
	// a whole table (stream records included) on every transaction, so one
	// shared table makes the suite quadratic there.
	newTable := func(t *testing.T) table.Table {
		return dynamotable.New(client, awstest.Table(t, client))
	}
	tabletest.Exercise(t, newTable, tabletest.Reduced())
	repotest.Exercise(t, newTable, tabletest.Reduced())
}
