package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/docpipe/docpipe/cmd/internal/relayfn"
	"github.com/docpipe/docpipe/pipeline"
)

func TestConfiguration(t *testing.T) {
	t.Parallel()
	if _, err := newHandler(context.Background(), env(nil), nil); err == nil {
		t.Error("no table: no error")
	}
	if _, err := newHandler(context.Background(), env(map[string]string{"DOCPIPE_TABLE": "t", "DOCPIPE_WEBHOOK_URL": "ftp://x"}), nil); err == nil {
		t.Error("a non-http webhook: no error")
	}
	h, err := newHandler(context.Background(), env(map[string]string{
		"DOCPIPE_TABLE": "t", "DOCPIPE_BUCKET": "b", "AWS_REGION": "us-east-1",
		"DOCPIPE_WEBHOOK_URL": "https://hooks.example.com/x", "DOCPIPE_EVENTBRIDGE_BUS": "bus",
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.Relay.Sinks); n != 2 || h.Relay.BlobURI("k") != "s3://b/k" || h.Relay.ProjectSinks == nil {
		t.Errorf("relay %+v: want webhook and bus sinks, s3 URIs, project sinks", h.Relay)
	}
}

// The relay's webhooks reach only public addresses unless the deployment
// allows private networks explicitly.
func TestWebhookAddressGuard(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	env := func(extra ...string) func(string) string {
		m := map[string]string{"DOCPIPE_TABLE": "t", "AWS_REGION": "us-east-1", "DOCPIPE_WEBHOOK_URL": srv.URL}
		for i := 0; i < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return func(k string) string { return m[k] }
	}
	deliver := func(h *relayfn.Handler) error {
		return h.Relay.Sinks[0].Deliver(t.Context(), pipeline.Event{ID: "evt_1"}, []byte(`{}`))
	}
	h, err := newHandler(t.Context(), env(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := deliver(h); err == nil || hits.Load() != 0 {
		t.Errorf("loopback webhook by default: %v, %d hits", err, hits.Load())
	}
	if _, err := newHandler(t.Context(), env("DOCPIPE_ALLOW_PRIVATE_NETWORK", "maybe"), nil); err == nil {
		t.Error("DOCPIPE_ALLOW_PRIVATE_NETWORK=maybe: no error")
	}
	if h, err = newHandler(t.Context(), env("DOCPIPE_ALLOW_PRIVATE_NETWORK", "true"), nil); err != nil {
		t.Fatal(err)
	}
	if err := deliver(h); err != nil || hits.Load() != 1 {
		t.Errorf("loopback webhook allowed: %v, %d hits", err, hits.Load())
	}
}
