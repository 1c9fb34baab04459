package ai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

const testModel = "anthropic.claude-3-haiku-20240307-v1:0"

func testBedrock(url string, attempts int) *Bedrock {
	cfg := aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	client := NewBedrockClient(cfg, "eu-central-1", attempts)
	client = bedrockruntime.New(client.Options(), func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(url) })
	return &Bedrock{Client: client, ModelID: testModel, MaxTokens: 512}
}

// checkConverse fails the test unless r is a signed Converse call of the
// test model.
func checkConverse(t *testing.T, r *http.Request) map[string]any {
	t.Helper()
	if r.Method != http.MethodPost || r.URL.Path != "/model/"+testModel+"/converse" {
		t.Errorf("request %s %s", r.Method, r.URL.Path)
	}
	if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || !strings.Contains(auth, "/eu-central-1/bedrock/aws4_request") {
		t.Errorf("Authorization %q is not a SigV4 signature for bedrock", auth)
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		t.Error(err)
	}
	return body
}

func TestBedrockReplaysConverse(t *testing.T) {
	reply := fixture(t, "bedrock_converse.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := checkConverse(t, r)
		msgs, _ := body["messages"].([]any)
		system, _ := json.Marshal(body["system"])
		inference, _ := json.Marshal(body["inferenceConfig"])
		if len(msgs) != 1 || !strings.Contains(string(system), `\"entities\"`) || string(inference) != `{"maxTokens":512}` {
			t.Errorf("body: messages %v, system %s, inference %s", msgs, system, inference)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	}))
	defer srv.Close()
	res, err := Analyze(context.Background(), testBedrock(srv.URL, 0), Task{Scope: ScopeSegment, Text: "Rechnung 2024-117"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage != (Usage{1254, 73}) || !strings.Contains(string(res.Output), `"Müller GmbH"`) {
		t.Fatalf("got %s %+v", res.Output, res.Usage)
	}
}

func TestBedrockRetriesThrottling(t *testing.T) {
	reply := fixture(t, "bedrock_converse.json")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checkConverse(t, r)
		if calls.Add(1) == 1 {
			w.Header().Set("X-Amzn-ErrorType", "ThrottlingException")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"message":"Too many requests, please wait before trying again."}`))
			return
		}
		w.Write(reply)
	}))
	defer srv.Close()
	r, err := testBedrock(srv.URL, 0).Chat(context.Background(), Chat{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err != nil || calls.Load() != 2 || r.StopReason != "end_turn" {
		t.Fatalf("got %v after %d calls", err, calls.Load())
	}
}

func TestBedrockErrorsAreClassified(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, status := "ThrottlingException", http.StatusTooManyRequests
		if r.Header.Get("X-Test") == "bad" {
			kind, status = "ValidationException", http.StatusBadRequest
		}
		w.Header().Set("X-Amzn-ErrorType", kind)
		w.WriteHeader(status)
		w.Write([]byte(`{"message":"no"}`))
	}))
	defer srv.Close()
	chat := Chat{Messages: []Message{{Role: RoleUser, Text: "x"}}}
	var transient *steperr.TransientError
	if _, err := testBedrock(srv.URL, 1).Chat(context.Background(), chat); !errors.As(err, &transient) || !strings.Contains(err.Error(), "ThrottlingException") {
		t.Errorf("throttled past the retries: want transient, got %v", err)
	}
	b := testBedrock(srv.URL, 1)
	b.Client = bedrockruntime.New(b.Client.Options(), func(o *bedrockruntime.Options) {
		o.HTTPClient = headerClient{"X-Test", "bad"}
	})
	var failed *steperr.StageFailedError
	if _, err := b.Chat(context.Background(), chat); !errors.As(err, &failed) || !strings.Contains(err.Error(), "ValidationException") {
		t.Errorf("validation: want stage failed, got %v", err)
	}
}

// headerClient adds one header to every request.
type headerClient [2]string

func (h headerClient) Do(r *http.Request) (*http.Response, error) {
	r.Header.Set(h[0], h[1])
	return http.DefaultClient.Do(r)
}
