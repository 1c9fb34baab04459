package integration

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// FaultyClient injects throttling and 5xx responses into a fraction of
// AWS calls. Half of the injected faults happen before the request reaches
// the service (nothing was done), half after (the service did the work but
// the client never hears of it) — the second kind is what proves that
// retried writes neither duplicate nor lose anything.
type FaultyClient struct {
	Next aws.HTTPClient
	// Rate is the fraction of calls that fail (0.1 = 10%).
	Rate float64

	mu       sync.Mutex
	rng      *rand.Rand
	Injected atomic.Int64
	Calls    atomic.Int64
}

// NewFaultyClient returns an HTTP client failing rate of the calls it
// passes to next, with a fixed seed so a failing run can be replayed.
func NewFaultyClient(next aws.HTTPClient, rate float64, seed uint64) *FaultyClient {
	return &FaultyClient{Next: next, Rate: rate, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (f *FaultyClient) roll() (fail, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64() < f.Rate, f.rng.IntN(2) == 0
}

// Do implements aws.HTTPClient.
func (f *FaultyClient) Do(req *http.Request) (*http.Response, error) {
	f.Calls.Add(1)
	fail, after := f.roll()
	if !fail {
		return f.Next.Do(req)
	}
	f.Injected.Add(1)
	if after {
		resp, err := f.Next.Do(req)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return faultResponse(req), nil
}

// faultResponse is what the service sends when it sheds load: DynamoDB's
// JSON throttling error, or S3's 503 SlowDown.
func faultResponse(req *http.Request) *http.Response {
	h := http.Header{}
	var status int
	var body string
	if strings.HasPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_") {
		status = http.StatusBadRequest
		h.Set("Content-Type", "application/x-amz-json-1.0")
		h.Set("X-Amzn-ErrorType", "ThrottlingException")
		body = `{"__type":"com.amazon.coral.availability#ThrottlingException","message":"Rate of requests exceeds the allowed throughput."}`
	} else if req.Header.Get("X-Amz-Target") != "" {
		status = http.StatusInternalServerError
		h.Set("Content-Type", "application/x-amz-json-1.0")
		body = `{"__type":"InternalFailure","message":"injected fault"}`
	} else {
		status = http.StatusServiceUnavailable
		h.Set("Content-Type", "application/xml")
		body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`
	}
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Header: h,
		Body: io.NopCloser(bytes.NewReader([]byte(body))), ContentLength: int64(len(body)),
		Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}
}
