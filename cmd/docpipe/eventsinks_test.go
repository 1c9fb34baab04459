package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// A project's webhook gets the outcome of that project's document and not
// the other project's, with no sink given on the command line.
func TestProjectSinkGetsOnlyItsProjectsEvents(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []pipeline.Event
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev pipeline.Event
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("event %q: %v", body, err)
		}
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	}))
	defer srv.Close()

	home, dir := t.TempDir(), t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	contract := write("contract.md", "# Contract\n\nAda Lovelace signed in London.\n")
	invoice := write("invoice.md", "# Invoice\n\nCharles Babbage paid in Paris.\n")
	for _, p := range []string{"contracts", "invoices"} {
		if _, err := cli(t, "project", "create", "--home", home, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli(t, "events", "sinks", "--home", home, "nope", "webhook="+srv.URL); err == nil {
		t.Error("sinks of a missing project: no error")
	}
	if _, err := cli(t, "events", "sinks", "--home", home, "contracts", "color=red"); err == nil {
		t.Error("unknown sink key: no error")
	}
	if _, err := cli(t, "events", "sinks", "--home", home, "contracts", "webhook="+srv.URL); err != nil {
		t.Fatal(err)
	}
	out, err := cli(t, "events", "sinks", "--home", home, "contracts")
	if err != nil || !strings.Contains(out, srv.URL) {
		t.Fatalf("events sinks contracts = %q, %v; want the webhook", out, err)
	}

	var results []docResult
	for _, run := range [][2]string{{"contracts", contract}, {"invoices", invoice}} {
		out, err := cli(t, "run", "--home", home, "--progress", "none", "--json", "--allow-private-network", "--project", run[0], run[1])
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, decodeLines[docResult](t, out)...)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].WorkflowID != results[0].WorkflowID || got[0].ProjectID != "contracts" {
		t.Fatalf("webhook got %+v, want only the contract's outcome (%s)", got, results[0].WorkflowID)
	}
	// The invoice's event had nowhere to go: it stays pending.
	out, err = cli(t, "events", "--home", home, "--json", results[1].WorkflowID)
	var entries []pipeline.OutboxEntry
	if err != nil || json.Unmarshal([]byte(out), &entries) != nil || len(entries) != 1 || entries[0].Delivery.State != pipeline.DeliveryPending {
		t.Fatalf("invoice's events = %s (%v), want one pending", out, err)
	}
}
