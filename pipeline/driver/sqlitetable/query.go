package sqlitetable

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline/table"
)

// cursor is the decoded page token: the position of the last item returned.
type cursor struct {
	Index string `json:"i"`
	Part  string `json:"q"` // the queried partition, so a token cannot be replayed elsewhere
	Sort  string `json:"s"` // index sort key
	PK    string `json:"p"`
	SK    string `json:"k"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c) // a struct of strings always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(tok string, q table.Query) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Index != q.Index || c.Part != q.PK {
		return cursor{}, fmt.Errorf("sqlitetable: invalid page token for this query")
	}
	return c, nil
}

// Query reads one partition of the table or an index in sort-key order.
func (t *Table) Query(ctx context.Context, q table.Query) (table.Page, error) {
	var pkCol, skCol string
	switch q.Index {
	case table.IndexTable:
		pkCol, skCol = "pk", "sk"
	case table.IndexGSI1:
		pkCol, skCol = "gsi1pk", "gsi1sk"
	case table.IndexGSI2:
		pkCol, skCol = "gsi2pk", "gsi2sk"
	default:
		return table.Page{}, fmt.Errorf("sqlitetable: unknown index %q", q.Index)
	}
	if q.SKPrefix != "" && (q.SKFrom != "" || q.SKTo != "") {
		return table.Page{}, errors.New("sqlitetable: query has both a prefix and a range")
	}
	var sb strings.Builder
	args := []any{q.PK, t.nowSeconds()}
	if q.CountOnly {
		fmt.Fprintf(&sb, "SELECT 1 FROM items WHERE %s = ? AND (ttl IS NULL OR ttl > ?)", pkCol)
		args = appendRange(&sb, args, skCol, q)
		return t.count(ctx, q, sb.String(), args)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	fmt.Fprintf(&sb, "SELECT pk, sk, %s, item FROM items WHERE %s = ? AND (ttl IS NULL OR ttl > ?)", skCol, pkCol)
	args = appendRange(&sb, args, skCol, q)
	// On an index, items may share a sort key: the base key breaks ties so
	// that paging is exact.
	order := skCol
	if q.Index != table.IndexTable {
		order = skCol + ", pk, sk"
	}
	cmp, dir := ">", "ASC"
	if q.Reverse {
		cmp, dir = "<", "DESC"
	}
	if q.PageToken != "" {
		c, err := decodeCursor(q.PageToken, q)
		if err != nil {
			return table.Page{}, err
		}
		if q.Index == table.IndexTable {
			sb.WriteString(" AND sk " + cmp + " ?")
			args = append(args, c.SK)
		} else {
			fmt.Fprintf(&sb, " AND (%s, pk, sk) %s (?, ?, ?)", skCol, cmp)
			args = append(args, c.Sort, c.PK, c.SK)
		}
	}
	orderBy := strings.ReplaceAll(order, ",", " "+dir+",") + " " + dir
	fmt.Fprintf(&sb, " ORDER BY %s LIMIT ?", orderBy)
	args = append(args, limit+1)

	st, err := t.readStmt(ctx, sb.String())
	if err != nil {
		return table.Page{}, fmt.Errorf("sqlitetable: query %s: %w", q.PK, err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return table.Page{}, fmt.Errorf("sqlitetable: query %s: %w", q.PK, interpretError(err))
	}
	defer rows.Close()
	var page table.Page
	var last cursor
	for rows.Next() {
		if len(page.Items) == limit {
			page.Next = encodeCursor(last)
			break
		}
		var raw string
		c := cursor{Index: q.Index, Part: q.PK}
		if err := rows.Scan(&c.PK, &c.SK, &c.Sort, &raw); err != nil {
			return table.Page{}, fmt.Errorf("sqlitetable: query %s: %w", q.PK, interpretError(err))
		}
		it, err := unmarshalItem(raw)
		if err != nil {
			return table.Page{}, err
		}
		page.Items = append(page.Items, it)
		last = c
	}
	if err := rows.Err(); err != nil {
		return table.Page{}, fmt.Errorf("sqlitetable: query %s: %w", q.PK, interpretError(err))
	}
	return page, nil
}

// appendRange adds q's sort-key condition to the statement and its args.
func appendRange(sb *strings.Builder, args []any, skCol string, q table.Query) []any {
	if q.SKPrefix != "" {
		sb.WriteString(" AND " + skCol + " >= ?")
		args = append(args, q.SKPrefix)
		if upper, ok := prefixEnd(q.SKPrefix); ok {
			sb.WriteString(" AND " + skCol + " < ?")
			args = append(args, upper)
		}
	}
	if q.SKFrom != "" {
		sb.WriteString(" AND " + skCol + " >= ?")
		args = append(args, q.SKFrom)
	}
	if q.SKTo != "" {
		sb.WriteString(" AND " + skCol + " <= ?")
		args = append(args, q.SKTo)
	}
	return args
}

// count answers a CountOnly query: the matching rows are counted inside
// SQLite from the index range, never read out. A limit of -1 is none.
func (t *Table) count(ctx context.Context, q table.Query, matching string, args []any) (table.Page, error) {
	limit := -1
	if q.Limit > 0 {
		limit = q.Limit
	}
	st, err := t.readStmt(ctx, "SELECT COUNT(*) FROM ("+matching+" LIMIT ?)")
	if err != nil {
		return table.Page{}, fmt.Errorf("sqlitetable: count %s: %w", q.PK, err)
	}
	var n int
	if err := st.QueryRowContext(ctx, append(args, limit)...).Scan(&n); err != nil {
		return table.Page{}, fmt.Errorf("sqlitetable: count %s: %w", q.PK, interpretError(err))
	}
	return table.Page{Count: n}, nil
}

// prefixEnd returns the smallest string greater than every string with the
// given prefix, in byte order (SQLite's BINARY collation, DynamoDB's order).
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
