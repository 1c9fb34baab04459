package sfn

import (
	"context"
	"io"
	"strings"

	"github.com/docpipe/docpipe/pipeline/blob"
)

// memBlobs serves any key with the same small body: registration only
// hashes the upload.
type memBlobs struct{ blob.Store }

func (memBlobs) Get(context.Context, string) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("hello")), nil
}
