package sqlitetable_test

import (
	"testing"

	"github.com/docpipe/docpipe/pipeline/table"
)

func TestPageTokenBelongsToItsQuery(t *testing.T) {
	t.Parallel()
	tb := openTable(t)
	ctx := t.Context()
	for _, sk := range []string{"a", "b", "c"} {
		if err := tb.Put(ctx, table.Item{"PK": "p", "SK": sk}, nil); err != nil {
			t.Fatal(err)
		}
	}
	page, err := tb.Query(ctx, table.Query{PK: "p", Limit: 1})
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	for _, q := range []table.Query{
		{PK: "other", PageToken: page.Next},
		{PK: "p", Index: table.IndexGSI1, PageToken: page.Next},
		{PK: "p", PageToken: "not a token"},
	} {
		if _, err := tb.Query(ctx, q); err == nil {
			t.Errorf("Query %+v accepted a foreign token", q)
		}
	}
	if _, err := tb.Query(ctx, table.Query{PK: "p", Index: "GSI9"}); err == nil {
		t.Error("unknown index accepted")
	}
	if _, err := tb.Query(ctx, table.Query{PK: "p", SKPrefix: "a", SKFrom: "a"}); err == nil {
		t.Error("prefix and range together accepted")
	}
}
