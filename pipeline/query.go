package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/docpipe/docpipe/pipeline/table"
	"golang.org/x/sync/errgroup"
)

// queryPage runs one page of q and decodes it.
func queryPage[T any](ctx context.Context, t table.Table, q table.Query) ([]T, string, error) {
	page, err := t.Query(ctx, q)
	if err != nil {
		return nil, "", fmt.Errorf("pipeline: query %s: %w", q.PK, err)
	}
	out, err := decodeAll[T](page.Items)
	return out, page.Next, err
}

// queryAll follows q's pages to the end.
func queryAll(ctx context.Context, t table.Table, q table.Query) ([]table.Item, error) {
	return queryUpTo(ctx, t, q, 0)
}

// queryUpTo follows q's pages until it has limit items (limit <= 0: all).
func queryUpTo(ctx context.Context, t table.Table, q table.Query, limit int) ([]table.Item, error) {
	var out []table.Item
	for {
		page, err := t.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("pipeline: query %s: %w", q.PK, err)
		}
		out = append(out, page.Items...)
		if page.Next == "" || (limit > 0 && len(out) >= limit) {
			if limit > 0 && len(out) > limit {
				out = out[:limit]
			}
			return out, nil
		}
		q.PageToken = page.Next
	}
}

// queryShards runs one query per status-index shard at once and merges the
// items by their GSI1 sort key, ascending, or descending when newestFirst;
// limit > 0 bounds each shard's query and the merged result.
func queryShards(ctx context.Context, t table.Table, limit int, newestFirst bool, query func(shard int) table.Query) ([]table.Item, error) {
	shards := make([][]table.Item, StatusShards)
	g, gctx := errgroup.WithContext(ctx)
	for shard := range StatusShards {
		g.Go(func() error {
			items, err := queryUpTo(gctx, t, query(shard), limit)
			shards[shard] = items
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	merged := slices.Concat(shards...)
	sk := func(it table.Item) string { s, _ := it[table.AttrGSI1SK].(string); return s }
	slices.SortFunc(merged, func(a, b table.Item) int {
		if newestFirst {
			a, b = b, a
		}
		return strings.Compare(sk(a), sk(b))
	})
	if limit > 0 && len(merged) > limit {
		merged = merged[:limit]
	}
	return merged, nil
}
