package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --cost prices the tokens a pipeline's AI stages billed: a
// segment-scope openai_analyzer and a document-scope one, answered by a
// chat.completions imitation replaying the recorded fixture (1117 input
// and 46 output tokens a request).
func TestCostPricesAITokens(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile("../../pipeline/ai/testdata/openai_chat_completion.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(fixture)
	}))
	defer srv.Close()
	dir := t.TempDir()
	settings := "\n      model: llama3.1:8b\n      base_url: " + srv.URL + "/v1\n"
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(`name: ai
stages:
  - name: analyse
    scope: segment
    run: {builtin: openai_analyzer}
    settings:`+settings+`  - name: overview
    scope: document
    needs: [analyse]
    run: {builtin: openai_analyzer}
    settings:`+settings), 0o644); err != nil {
		t.Fatal(err)
	}
	prices := filepath.Join(dir, "prices.json")
	if err := os.WriteFile(prices, []byte(`{"models": {"llama3.1:8b": {"input_per_1k": 0.1, "output_per_1k": 0.2}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"pipeline", "apply", "--home", home, file}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	// The pipeline is stored under home: documents run there.
	runCost := func(doc string, extra ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := append([]string{"run", "--home", home, "--progress", "none", "--pipeline", "ai", "--cost"}, extra...)
		if err := run(context.Background(), append(args, doc), &stdout, &stderr); err != nil {
			t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
		}
		return stderr.String()
	}

	out := runCost("../../samples/docs/notes.md", "--prices", prices)
	var pages int
	var in, outTok int64
	var perIn, perOut, per1000 float64
	line := out[strings.Index(out, "cost: AI"):]
	if _, err := fmt.Sscanf(line, "cost: AI tokens %d input, %d output; per segment %f input, %f output; estimated $%f per 1,000 pages",
		&in, &outTok, &perIn, &perOut, &per1000); err != nil {
		t.Fatalf("AI cost line %q: %v", line, err)
	}
	if _, err := fmt.Sscanf(out[strings.Index(out, "cost:"):], "cost: %d segments processed", &pages); err != nil || pages < 2 {
		t.Fatalf("cost output %q: %v", out, err)
	}
	requests := int64(pages + 1) // one per segment, one for the document
	if in != 1117*requests || outTok != 46*requests {
		t.Errorf("tokens %d/%d, want %d/%d: %s", in, outTok, 1117*requests, 46*requests, out)
	}
	want := float64(requests) * (1.117*0.1 + 0.046*0.2) / float64(pages) * 1000
	if math.Abs(per1000-want) > 0.01 || !strings.Contains(line, "prices from --prices") {
		t.Errorf("estimated $%.2f per 1,000 pages, want $%.2f: %s", per1000, want, line)
	}
	if strings.Contains(out, "no price") {
		t.Errorf("a priced model reported unpriced: %s", out)
	}

	// The list prices have no local model: its tokens are counted, not priced.
	out = runCost("../../samples/docs/letter.txt")
	if !strings.Contains(out, "cost: no price for llama3.1:8b") || !strings.Contains(out, "estimated $0.00 per 1,000 pages (list prices as of 2026") {
		t.Errorf("unpriced model not named: %s", out)
	}
}
