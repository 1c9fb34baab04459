package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/pipeline"
)

const crashSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// A run killed while its outcome event is on the wire (committed with the
// outcome, not yet delivered) loses nothing: the next `docpipe work`
// delivers the event, with the id the killed run tried, and no other.
func TestOutboxEventSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it; skipped with -short")
	}
	bin := testbin.Docpipe(t)
	verifier, err := standardwebhooks.NewWebhook(crashSecret)
	if err != nil {
		t.Fatal(err)
	}
	// decode verifies a request and returns its event.
	decode := func(r *http.Request) (pipeline.Event, bool) {
		body, _ := io.ReadAll(r.Body)
		var ev pipeline.Event
		if err := verifier.Verify(body, r.Header); err != nil {
			t.Errorf("signature: %v", err)
			return ev, false
		}
		if err := json.Unmarshal(body, &ev); err != nil || ev.ID != r.Header.Get("webhook-id") {
			t.Errorf("event %q (webhook-id %s): %v", body, r.Header.Get("webhook-id"), err)
			return ev, false
		}
		return ev, true
	}

	// The first receiver takes the request and never answers.
	tried := make(chan pipeline.Event, 16)
	release := make(chan struct{})
	blocking := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ev, ok := decode(r); ok {
			tried <- ev
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer blocking.Close()
	defer close(release)

	var mu sync.Mutex
	var delivered []pipeline.Event
	answering := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ev, ok := decode(r); ok {
			mu.Lock()
			delivered = append(delivered, ev)
			mu.Unlock()
		}
	}))
	defer answering.Close()

	home, input := t.TempDir(), t.TempDir()
	doc := filepath.Join(input, "note.md")
	if err := os.WriteFile(doc, []byte("# Note\n\nAda Lovelace wrote in London.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	command := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "DOCPIPE_WEBHOOK_SECRET="+crashSecret)
		return cmd
	}

	first := command("run", "--home", home, "--progress", "none", "--json", "--webhook", blocking.URL, "--allow-private-network", doc)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	var ev pipeline.Event
	select {
	case ev = <-tried:
	case <-ctx.Done():
		first.Process.Kill()
		t.Fatal("the run never tried to deliver its event")
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if ws, ok := first.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the run ended on its own (%v) before it was killed", first.ProcessState)
	}
	if ev.Type != pipeline.EventCompleted {
		t.Fatalf("the run tried %s, want %s", ev.Type, pipeline.EventCompleted)
	}

	if out, err := command("work", "--home", home, "--progress", "none", "--webhook", answering.URL, "--allow-private-network").CombinedOutput(); err != nil {
		t.Fatalf("work: %v\n%s", err, out)
	}
	mu.Lock()
	var ids []string
	for _, d := range delivered {
		ids = append(ids, d.ID)
	}
	mu.Unlock()
	slices.Sort(ids)
	if ids = slices.Compact(ids); !slices.Equal(ids, []string{ev.ID}) {
		t.Fatalf("work delivered event ids %v, want only %s (the one the killed run tried)", ids, ev.ID)
	}
	out, err := cli(t, "events", "--home", home, "--json", ev.WorkflowID)
	var entries []pipeline.OutboxEntry
	if err != nil || json.Unmarshal([]byte(out), &entries) != nil || len(entries) != 1 ||
		entries[0].Event.ID != ev.ID || entries[0].Delivery.State != pipeline.DeliveryDelivered {
		t.Fatalf("events of %s = %s (%v), want %s delivered, alone", ev.WorkflowID, out, err, ev.ID)
	}
}
