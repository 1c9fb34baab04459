package main

import (
	"context"
	"testing"
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
