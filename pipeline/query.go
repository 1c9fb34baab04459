package pipeline

import (
	"context"
	"fmt"

	"github.com/docpipe/docpipe/pipeline/table"
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
