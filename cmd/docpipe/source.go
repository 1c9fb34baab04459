package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/docpipe/docpipe/cmd/internal/backend"
)

// noStateError is a local state home that does not exist yet: nothing has
// run there. Listings print their empty form for it (noState); other
// reads say how to start.
type noStateError struct{ home string }

func (e noStateError) Error() string {
	return fmt.Sprintf("nothing has run in %s yet: `docpipe run FILE` starts there, --home names another state directory", e.home)
}

// noState reports whether err is a state home that does not exist yet.
func noState(err error) bool { return errors.As(err, new(noStateError)) }

// openSource opens what status and show read from, by the one rule of
// onAWS: DynamoDB and S3 (AWS settings from the SDK's usual chain:
// credentials, AWS_REGION, AWS_ENDPOINT_URL), or the local state home,
// which must exist already (noStateError otherwise: reading never creates
// it).
func (a *app) openSource(ctx context.Context) (*backend.Backend, error) {
	if a.onAWS() {
		return backend.OpenAWS(ctx, backend.AWSOptions{Table: a.table, Bucket: a.bucket})
	}
	if _, err := os.Stat(a.home); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, noStateError{a.home}
		}
		return nil, err
	}
	return backend.OpenLocal(a.home)
}
