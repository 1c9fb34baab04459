// Package repotest is the conformance suite of pipeline.Repository over a
// table.Table driver: entities and their keys, status transitions and
// their races, segments, the outbox, pipeline versions, project settings
// and admission. SQLite and DynamoDB run it beside the raw table suite
// (pipeline/table/tabletest), with the same options. Like that suite it
// creates what each test needs under fresh ids and never depends on the
// table being empty.
package repotest

import (
	"slices"
	"testing"

	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/docpipe/docpipe/pipeline/table/tabletest"
)

// Exercise runs the suite. newTable is called once per subtest and may
// return the same shared table every time.
func Exercise(t *testing.T, newTable func(t *testing.T) table.Table, opts ...tabletest.Option) {
	t.Helper()
	cfg := tabletest.Configure(opts...)
	t.Run("Repository", func(t *testing.T) {
		t.Parallel()
		for _, tc := range slices.Concat(repositoryTests, outboxTests, pipelineTests, evalTests, stageCacheTests) {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.fn(t, newTable(t), cfg)
			})
		}
	})
}
