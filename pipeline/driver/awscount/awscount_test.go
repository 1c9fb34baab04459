package awscount_test

import (
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"github.com/docpipe/docpipe/pipeline/driver/awscount"
	"github.com/docpipe/docpipe/pipeline/driver/awstest"
)

func TestZeroCounter(t *testing.T) {
	t.Parallel()
	var c awscount.Counter
	if s := c.Snapshot(); s == nil || len(s) != 0 || c.Total() != 0 {
		t.Errorf("zero counter: %v, %d", s, c.Total())
	}
}

// unavailable answers every request with a 503, which the SDK retries.
type unavailable struct{}

func (unavailable) Do(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusServiceUnavailable,
		Header:     http.Header{},
		Body:       io.NopCloser(strings.NewReader("")),
		Request:    req,
	}, nil
}

// Each attempt is a request on the wire: a call tried three times counts
// three. No network: the HTTP client is a fake.
func TestCountsAttempts(t *testing.T) {
	t.Parallel()
	var c awscount.Counter
	client := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		Credentials:  aws.AnonymousCredentials{},
		BaseEndpoint: aws.String("http://dynamodb.invalid"),
		HTTPClient:   unavailable{},
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.RateLimiter = ratelimit.None
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
		APIOptions: []func(*middleware.Stack) error{c.AddTo},
	})
	if _, err := client.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err == nil {
		t.Fatal("ListTables against a 503: no error")
	}
	if got, want := c.Snapshot(), map[string]int{"DynamoDB.ListTables": 3}; !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if old := c.Reset(); old["DynamoDB.ListTables"] != 3 || c.Total() != 0 {
		t.Errorf("Reset returned %v and left %d", old, c.Total())
	}
}

// wire counts the requests that reach the HTTP client, by operation, so
// that a test can compare the counter with what was really sent: an
// emulator under load may drop a response, and the SDK's retry of it is a
// request too.
type wire struct {
	next aws.HTTPClient
	mu   sync.Mutex
	n    map[string]int
}

func (w *wire) Do(req *http.Request) (*http.Response, error) {
	op := req.Method + " " + req.URL.Path
	if target := req.Header.Get("X-Amz-Target"); target != "" {
		op = "DynamoDB." + target[strings.LastIndexByte(target, '.')+1:]
	} else if req.Method == http.MethodHead {
		op = "S3.HeadBucket"
	} else if req.Method == http.MethodPut {
		op = "S3.CreateBucket"
	}
	w.mu.Lock()
	w.n[op]++
	w.mu.Unlock()
	return w.next.Do(req)
}

func (w *wire) snapshot() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.n)
}

// One counter on two services, used from many goroutines (run with -race).
func TestCountsAgainstEndpoint(t *testing.T) {
	t.Parallel()
	var c awscount.Counter
	cfg := awstest.Config(t) // skips without an endpoint
	cfg.APIOptions = append(cfg.APIOptions, c.AddTo)
	sent := &wire{next: cfg.HTTPClient, n: map[string]int{}}
	cfg.HTTPClient = sent
	ddb := dynamodb.NewFromConfig(cfg)
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	bucket := awstest.Bucket(t, s3c) // counted too: CreateBucket
	before := c.Snapshot()

	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for range n {
		wg.Go(func() {
			_, err := ddb.ListTables(t.Context(), &dynamodb.ListTablesInput{})
			errs <- err
		})
		wg.Go(func() {
			_, err := s3c.HeadBucket(t.Context(), &s3.HeadBucketInput{Bucket: &bucket})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := c.Snapshot()
	if before["S3.CreateBucket"] < 1 {
		t.Errorf("before: %v, want S3.CreateBucket", before)
	}
	if got["DynamoDB.ListTables"] < n || got["S3.HeadBucket"] < n {
		t.Errorf("counts %v, want at least %d ListTables and %d HeadBucket", got, n, n)
	}
	if want := sent.snapshot(); !maps.Equal(got, want) {
		t.Errorf("counted %v, but sent %v", got, want)
	}
}
