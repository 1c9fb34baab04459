package backend

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/driver/awscount"
)

// AIClients are the clients analysis stages call their models through:
// Bedrock over the AWS configuration awsConfig returns (LoadAWSConfig's,
// so the retry policy and request counting of every other AWS client),
// OpenAI-compatible endpoints over the default HTTP client, with their API
// keys read through getenv.
func AIClients(awsConfig func(context.Context) (aws.Config, error), getenv func(string) string) ai.Clients {
	return ai.Clients{AWS: awsConfig, Getenv: getenv}
}

// AWSConfigOnce loads the AWS configuration (LoadAWSConfig) when first
// asked for and keeps it, so that a local run with no Bedrock stage loads
// none; a failed load is tried again on the next call.
func AWSConfigOnce(counter *awscount.Counter) func(context.Context) (aws.Config, error) {
	var mu sync.Mutex
	var cfg *aws.Config
	return func(ctx context.Context) (aws.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		if cfg != nil {
			return *cfg, nil
		}
		c, err := LoadAWSConfig(ctx, counter)
		if err != nil {
			return aws.Config{}, err
		}
		cfg = &c
		return c, nil
	}
}
