package main

import (
	"context"
	"flag"
	"os"

	"github.com/docpipe/docpipe/cmd/internal/backend"
)

// sourceFlags choose where status and show read from: the local state home,
// or DynamoDB and S3 when a table is named (AWS settings come from the SDK's
// usual chain: credentials, AWS_REGION, AWS_ENDPOINT_URL).
type sourceFlags struct {
	home    string
	table   string
	bucket  string
	jsonOut bool
}

func (s *sourceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.home, "home", ".docpipe", "local state directory")
	fs.StringVar(&s.table, "table", os.Getenv(backend.EnvTable), "DynamoDB table (selects AWS; env "+backend.EnvTable+")")
	fs.StringVar(&s.bucket, "bucket", os.Getenv(backend.EnvBucket), "S3 bucket for results (env "+backend.EnvBucket+")")
	fs.BoolVar(&s.jsonOut, "json", false, "print JSON")
}

func (s *sourceFlags) open(ctx context.Context) (*backend.Backend, error) {
	if s.table != "" {
		return backend.OpenAWS(ctx, backend.AWSOptions{Table: s.table, Bucket: s.bucket})
	}
	if _, err := os.Stat(s.home); err != nil {
		return nil, err
	}
	return backend.OpenLocal(s.home)
}
