package blob_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
)

// Bulk data lives in a blob store under keys laid out
// <project>/<document>/<workflow>/...; the table holds only the keys. The
// same calls run on a directory (dirblob) and on S3 (s3blob).
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "blob-example")
	defer os.RemoveAll(dir)
	var store blob.Store
	store, err := dirblob.New(dir)
	if err != nil {
		panic(err)
	}
	key := "default/doc1/wf1/segments/000001/text.txt"
	if err := blob.PutBytes(ctx, store, key, []byte("page one")); err != nil {
		panic(err)
	}
	// Flush makes what was Put durable before the table records it.
	if err := blob.Flush(ctx, store); err != nil {
		panic(err)
	}
	text, err := blob.GetBytes(ctx, store, key, 1<<20)
	fmt.Println(string(text), err)

	_, err = blob.GetBytes(ctx, store, key, 4)
	var tooLarge *blob.TooLargeError
	fmt.Println(errors.As(err, &tooLarge))

	_, err = blob.GetBytes(ctx, store, "default/doc1/wf1/missing", 1<<20)
	fmt.Println(errors.Is(err, blob.ErrNotFound))
	// Output:
	// page one <nil>
	// true
	// true
}
