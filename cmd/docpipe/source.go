package main

import (
	"context"
	"os"

	"github.com/docpipe/docpipe/cmd/internal/backend"
)

// openSource opens what status and show read from, by the one rule of
// onAWS: DynamoDB and S3 (AWS settings from the SDK's usual chain:
// credentials, AWS_REGION, AWS_ENDPOINT_URL), or the local state home,
// which must exist already.
func (a *app) openSource(ctx context.Context) (*backend.Backend, error) {
	if a.onAWS() {
		return backend.OpenAWS(ctx, backend.AWSOptions{Table: a.table, Bucket: a.bucket})
	}
	if _, err := os.Stat(a.home); err != nil {
		return nil, err
	}
	return backend.OpenLocal(a.home)
}
