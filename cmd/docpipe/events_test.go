package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// A run announces each document's outcome to the event command before it
// exits; `events WORKFLOW` and `status WORKFLOW` show the delivery.
func TestRunDeliversOutcomeEvents(t *testing.T) {
	t.Parallel()
	home, out := t.TempDir(), filepath.Join(t.TempDir(), "events.jsonl")
	doc := filepath.Join(t.TempDir(), "note.md")
	if err := os.WriteFile(doc, []byte("# Note\n\nAda Lovelace wrote in London.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--home", home, "--progress", "none", "--json", "--event-command", "cat >> " + out + "; echo >> " + out, doc}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var res docResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("run output %q: %v", stdout.String(), err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the event command never ran: %v", err)
	}
	var ev pipeline.Event
	if err := json.Unmarshal(bytes.TrimSpace(got), &ev); err != nil {
		t.Fatalf("event %q: %v", got, err)
	}
	if ev.Type != pipeline.EventCompleted || ev.WorkflowID != res.WorkflowID || ev.Document.FileName != "note.md" ||
		ev.Results == nil || !strings.HasPrefix(ev.Results.SummaryURI, "file://") {
		t.Fatalf("event = %+v, want analysis.completed of %s", ev, res.WorkflowID)
	}

	stdout.Reset()
	if err := run(context.Background(), []string{"events", "--home", home, "--json", res.WorkflowID}, &stdout, &stderr); err != nil {
		t.Fatalf("events: %v", err)
	}
	var entries []pipeline.OutboxEntry
	if err := json.Unmarshal(stdout.Bytes(), &entries); err != nil || len(entries) != 1 ||
		entries[0].Event.ID != ev.ID || entries[0].Delivery.State != pipeline.DeliveryDelivered {
		t.Fatalf("events --json = %s (%v), want %s delivered", stdout.String(), err, ev.ID)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"status", "--home", home, res.WorkflowID}, &stdout, &stderr); err != nil {
		t.Fatalf("status: %v", err)
	}
	if !strings.Contains(stdout.String(), ev.ID) || !strings.Contains(stdout.String(), "delivered") {
		t.Fatalf("status does not show the event:\n%s", stdout.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"events", "--home", home, "--failed"}, &stdout, &stderr); err != nil || strings.TrimSpace(stdout.String()) != "no events" {
		t.Fatalf("events --failed = %q, %v", stdout.String(), err)
	}
}
