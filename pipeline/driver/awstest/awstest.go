// Package awstest helps tests run against an AWS-compatible endpoint
// (moto, LocalStack, or AWS itself through a service endpoint): it reads the
// endpoint, builds clients, and creates uniquely named tables and buckets
// that are removed when the test ends. Tests that need an endpoint skip,
// saying why, when AWS_ENDPOINT_URL is not set.
package awstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/driver/s3blob"
)

// EnvEndpoint is the variable the SDK itself reads for an endpoint override.
const EnvEndpoint = "AWS_ENDPOINT_URL"

// EnvEmulator names the AWS-compatible emulator behind the endpoint, for
// the few tests that must know it: "moto" (assumed when unset, as `make
// test` runs moto) or "localstack". Any other value, "aws" for instance,
// means no emulator: no gap is expected and no test skips for one.
const EnvEmulator = "DOCPIPE_EMULATOR"

// The emulators EnvEmulator names.
const (
	Moto       = "moto"
	LocalStack = "localstack"
)

// Emulator returns the emulator EnvEmulator names, in lower case.
func Emulator() string {
	if e := os.Getenv(EnvEmulator); e != "" {
		return strings.ToLower(e)
	}
	return Moto
}

// SkipOn skips the test when it runs against emulator, naming the gap of
// that emulator it cannot pass for.
func SkipOn(t testing.TB, emulator, gap string) {
	t.Helper()
	if Emulator() == emulator {
		t.Skipf("%s gap: %s", emulator, gap)
	}
}

// EnvSuiteEndpoint, when set, is the endpoint of the conformance suites
// (the drivers' and the interpreter's cases against AWS APIs; see
// MainForSuite) in place of EnvEndpoint. make test starts a second
// emulator for them: an emulator serves on one core, and the integration
// suite keeps the first one busy.
const EnvSuiteEndpoint = "AWSTEST_SUITE_ENDPOINT_URL"

// MainForSuite runs a conformance suite's tests, from its TestMain, on the
// EnvSuiteEndpoint emulator when one is set.
func MainForSuite(m *testing.M) {
	if ep := os.Getenv(EnvSuiteEndpoint); ep != "" {
		os.Setenv(EnvEndpoint, ep)
	}
	os.Exit(m.Run())
}

// EnvParallel, when set to anything, lets requests to the endpoint run
// concurrently; see serialClient for why they do not by default.
const EnvParallel = "AWSTEST_PARALLEL_REQUESTS"

// cleanupTimeout bounds the removal of a test's table or bucket; it runs
// after the test's own context is canceled.
const cleanupTimeout = time.Minute

// Endpoint returns the configured endpoint, or skips the test.
func Endpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv(EnvEndpoint)
	if ep == "" {
		t.Skipf("integration test: set %s (for example http://127.0.0.1:4566 with moto_server or LocalStack running) to run it", EnvEndpoint)
	}
	return ep
}

// Config returns an aws.Config for the endpoint (skipping the test without
// one), with the SDK's usual credential chain, region us-east-1 when none is
// configured, static dummy credentials when none are (emulators accept any),
// and the throttle-tolerant retryer the drivers use in production.
func Config(t testing.TB) aws.Config {
	t.Helper()
	endpoint := Endpoint(t)
	var opts []func(*config.LoadOptions) error
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		opts = append(opts, config.WithRegion("us-east-1"))
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	}
	opts = append(opts, config.WithRetryer(dynamotable.NewRetryer))
	cfg, err := config.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		t.Fatalf("awstest: load AWS config: %v", err)
	}
	cfg.BaseEndpoint = aws.String(endpoint)
	if os.Getenv(EnvParallel) == "" {
		cfg.HTTPClient = serialClient{next: cfg.HTTPClient, mu: serialMu(endpoint)}
	}
	return cfg
}

// DynamoDB returns a DynamoDB client for the endpoint.
func DynamoDB(t testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	return dynamodb.NewFromConfig(Config(t), optFns...)
}

// S3 returns an S3 client for the endpoint, with path-style addressing.
func S3(t testing.TB, optFns ...func(*s3.Options)) *s3.Client {
	t.Helper()
	return s3.NewFromConfig(Config(t), append([]func(*s3.Options){s3blob.PathStyleForEndpoint}, optFns...)...)
}

// UniqueName returns prefix followed by a random suffix, in the characters
// both table and bucket names allow (lower-case letters, digits, '-').
func UniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return strings.ToLower(prefix) + "-" + time.Now().UTC().Format("150405") + "-" + hex.EncodeToString(b[:])
}

// Table creates a table with the docpipe layout under a unique name and
// deletes it when the test ends. It returns the name. Options go to
// dynamotable.CreateTable; without any, the table has no stream, which no
// test reads and which slows moto down (see dynamotable.WithoutStream).
func Table(t testing.TB, client *dynamodb.Client, opts ...dynamotable.CreateOption) string {
	t.Helper()
	name := UniqueName("docpipe-test")
	if opts == nil {
		opts = []dynamotable.CreateOption{dynamotable.WithoutStream()}
	}
	if err := dynamotable.CreateTable(t.Context(), client, name, opts...); err != nil {
		t.Fatalf("awstest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := dynamotable.DeleteTable(ctx, client, name); err != nil {
			t.Errorf("awstest: %v", err)
		}
	})
	return name
}

// Bucket creates a bucket under a unique name and empties and deletes it
// when the test ends. It returns the name.
func Bucket(t testing.TB, client *s3.Client) string {
	t.Helper()
	name := UniqueName("docpipe-test")
	if err := s3blob.CreateBucket(t.Context(), client, name); err != nil {
		t.Fatalf("awstest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := s3blob.DeleteBucket(ctx, client, name); err != nil {
			t.Errorf("awstest: %v", err)
		}
	})
	return name
}

// serialMus holds one lock per endpoint, shared by every client of the
// process: an emulator is one server, whichever client talks to it.
var serialMus sync.Map // endpoint → *sync.Mutex

func serialMu(endpoint string) *sync.Mutex {
	mu, _ := serialMus.LoadOrStore(endpoint, new(sync.Mutex))
	return mu.(*sync.Mutex)
}

// serialClient sends one request at a time. moto_server answers requests
// on threads and updates items without locks, so two concurrent conditional
// writes to one item can both succeed there, which DynamoDB never allows.
// One request at a time restores DynamoDB's per-item atomicity; callers
// racing in the test still interleave freely between requests, so a driver
// that split one change across two requests would still lose the race.
// Against LocalStack or AWS, set EnvParallel.
type serialClient struct {
	next aws.HTTPClient
	mu   *sync.Mutex
}

func (c serialClient) Do(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The emulator has finished with the request once its answer starts,
	// so the body can be read after the lock is released.
	return c.next.Do(req)
}
