package dashboard

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/table"
)

// The repository lists the status index from the top only; the dashboard
// pages through it. A cursor is the last index sort key a page returned
// (status#updated#workflow), so the next page is one range query per shard
// strictly below it: never a scan, and stable while analyses move on.

// errBadCursor is a cursor this server did not hand out.
var errBadCursor = errors.New("bad cursor")

func encodeCursor(s string) string {
	if s == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// decodeCursor returns the sort key in cursor; it must begin with prefix.
func decodeCursor(cursor, prefix string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !strings.HasPrefix(string(b), prefix) || len(b) == len(prefix) {
		return "", errBadCursor
	}
	return string(b), nil
}

func sortKey(it table.Item, attr string) string {
	s, _ := it[attr].(string)
	return s
}

// statusPage returns up to limit analyses in status, most recently updated
// first, after the cursor, and the cursor of the next page ("" at the end).
func statusPage(ctx context.Context, t table.Table, status pipeline.WorkflowStatus, cursor string, limit int) ([]pipeline.StepProgress, string, error) {
	prefix := string(status) + "#"
	after, err := decodeCursor(cursor, prefix)
	if err != nil {
		return nil, "", err
	}
	items, err := queryShards(ctx, t, prefix, after, limit+1)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(items) > limit {
		items = items[:limit]
		next = encodeCursor(sortKey(items[limit-1], table.AttrGSI1SK))
	}
	out, err := decodeItems[pipeline.StepProgress](items)
	return out, next, err
}

// countStatus counts the analyses in status, stopping at upTo (so a count
// costs a bounded read however large the index grows). Each shard counts
// its index range where the table keeps it; no item is read out.
func countStatus(ctx context.Context, t table.Table, status pipeline.WorkflowStatus, upTo int) (int, error) {
	counts := make([]int, pipeline.StatusShards)
	g, gctx := errgroup.WithContext(ctx)
	for shard := range pipeline.StatusShards {
		g.Go(func() error {
			q := table.Query{Index: table.IndexGSI1, PK: pipeline.StatusIndexPK(shard), SKPrefix: string(status) + "#", Limit: upTo, CountOnly: true}
			page, err := t.Query(gctx, q)
			if err != nil {
				return fmt.Errorf("count %s: %w", q.PK, err)
			}
			counts[shard] = page.Count
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	return min(n, upTo), nil
}

// queryShards reads up to limit index items with the sort-key prefix from
// every shard at once, below after when set, merged newest first.
func queryShards(ctx context.Context, t table.Table, prefix, after string, limit int) ([]table.Item, error) {
	shards := make([][]table.Item, pipeline.StatusShards)
	g, gctx := errgroup.WithContext(ctx)
	for shard := range pipeline.StatusShards {
		g.Go(func() error {
			q := table.Query{Index: table.IndexGSI1, PK: pipeline.StatusIndexPK(shard), SKPrefix: prefix, Reverse: true, Limit: limit}
			if after != "" {
				q.SKPrefix, q.SKFrom, q.SKTo = "", prefix, after
			}
			items, err := queryUpTo(gctx, t, q, limit, func(it table.Item) bool {
				return after == "" || sortKey(it, table.AttrGSI1SK) < after
			})
			shards[shard] = items
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	merged := slices.Concat(shards...)
	slices.SortFunc(merged, func(a, b table.Item) int {
		return strings.Compare(sortKey(b, table.AttrGSI1SK), sortKey(a, table.AttrGSI1SK))
	})
	if len(merged) > limit {
		merged = merged[:limit]
	}
	return merged, nil
}

// queryUpTo follows q's pages until limit items pass keep.
func queryUpTo(ctx context.Context, t table.Table, q table.Query, limit int, keep func(table.Item) bool) ([]table.Item, error) {
	var out []table.Item
	for {
		page, err := t.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.PK, err)
		}
		for _, it := range page.Items {
			if keep(it) {
				out = append(out, it)
			}
		}
		if page.Next == "" || len(out) >= limit {
			return out, nil
		}
		q.PageToken = page.Next
	}
}

// projectPage returns up to limit analyses of a project, newest first,
// after the cursor.
func projectPage(ctx context.Context, t table.Table, projectID, cursor string, limit int) ([]pipeline.Workflow, string, error) {
	q := table.Query{PK: pipeline.ProjectKey(projectID).PK}
	return workflowPage(ctx, t, q, table.AttrSK, cursor, limit)
}

// pipelinePage returns up to limit analyses that run a pipeline (any
// version), newest first, after the cursor: the workflows' GSI2 partition.
func pipelinePage(ctx context.Context, t table.Table, name, cursor string, limit int) ([]pipeline.Workflow, string, error) {
	q := table.Query{Index: table.IndexGSI2, PK: pipeline.PipelineIndexPK(name)}
	return workflowPage(ctx, t, q, table.AttrGSI2SK, cursor, limit)
}

// workflowPage reads the workflow items of q's partition, whose sort key
// (skAttr) is WORKFLOW#<time-ordered id>, newest first, below the cursor.
func workflowPage(ctx context.Context, t table.Table, q table.Query, skAttr, cursor string, limit int) ([]pipeline.Workflow, string, error) {
	after, err := decodeCursor(cursor, pipeline.PrefixWorkflow)
	if err != nil {
		return nil, "", err
	}
	q.SKPrefix, q.Reverse, q.Limit = pipeline.PrefixWorkflow, true, limit+1
	if after != "" {
		q.SKPrefix, q.SKFrom, q.SKTo = "", pipeline.PrefixWorkflow, after
	}
	items, err := queryUpTo(ctx, t, q, limit+1, func(it table.Item) bool {
		return after == "" || sortKey(it, skAttr) < after
	})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(items) > limit {
		items = items[:limit]
		next = encodeCursor(sortKey(items[limit-1], skAttr))
	}
	out, err := decodeItems[pipeline.Workflow](items)
	return out, next, err
}

// decodeItems reads the entity payloads of items, as the repository
// stores them under "data".
func decodeItems[T any](items []table.Item) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, it := range items {
		b, err := json.Marshal(it.Data())
		if err != nil {
			return nil, err
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("decode %s: %w", it.Key(), err)
		}
		out = append(out, v)
	}
	return out, nil
}
