// Package awscount counts AWS requests per service and operation, for cost
// accounting: add a Counter to any SDK client's APIOptions.
package awscount

import (
	"context"
	"maps"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// middlewareID names the counter in a client's middleware stack.
const middlewareID = "docpipe.awscount"

// Counter counts requests sent, keyed "Service.Operation" (for example
// "DynamoDB.GetItem", "S3.UploadPart"). It counts attempts, not calls: a
// call the SDK retries three times counts three, because each attempt is
// a request on the wire and most are billed. The zero value is ready to use
// and safe for concurrent use.
type Counter struct {
	mu sync.Mutex
	n  map[string]int
}

// AddTo installs the counter in a middleware stack; pass it in APIOptions:
//
//	dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
//		o.APIOptions = append(o.APIOptions, counter.AddTo)
//	})
//
// or append it to aws.Config.APIOptions to count every client made from it.
func (c *Counter) AddTo(stack *middleware.Stack) error {
	mw := middleware.FinalizeMiddlewareFunc(middlewareID, c.handle)
	// After the retry middleware, so that every attempt passes through.
	if _, ok := stack.Finalize.Get("Retry"); ok {
		return stack.Finalize.Insert(mw, "Retry", middleware.After)
	}
	return stack.Finalize.Add(mw, middleware.After)
}

func (c *Counter) handle(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	c.inc(awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx))
	return next.HandleFinalize(ctx, in)
}

func (c *Counter) inc(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
}

// Snapshot returns a copy of the counts so far.
func (c *Counter) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	maps.Copy(out, c.n)
	return out
}

// Total returns the number of requests counted so far.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, n := range c.n {
		total += n
	}
	return total
}

// Reset clears the counts and returns them.
func (c *Counter) Reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.n
	c.n = nil
	return old
}
