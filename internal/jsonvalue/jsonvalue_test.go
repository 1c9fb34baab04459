package jsonvalue

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// stdEncode is what Append stands in for.
func stdEncode(t *testing.T, v any, html bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
		"<html> & 'apostrophes'", "ünïcödé 日本語 🎉", "line\u2028sep\u2029para", "bad \xff\xfe utf8 \xe2\x82", "ends in \xc3"}
	nums := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 123456789, 1e20, 1e21, 1.2345e300, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3}
	items := []map[string]any{
		{"PK": "WF#1", "SK": "STEP", "data": map[string]any{"steps": map[string]any{"a": map[string]any{"status": "completed"}}}},
		{"PK": "p", "SK": "s", "list": []any{nil, true, false, "x", 1.5, []any{}, map[string]any{}}, "nilmap": map[string]any(nil), "nillist": []any(nil)},
	}
	for _, s := range strs {
		items = append(items, map[string]any{"PK": s, "SK": "k", s: s})
	}
	for _, f := range nums {
		items = append(items, map[string]any{"PK": "n", "SK": "k", "n": f, "neg": -f})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		items = append(items, randomMap(rng, 3, strs, nums))
	}
	for _, html := range []bool{false, true} {
		for i, it := range items {
			got, err := Append(nil, it, html)
			if err != nil {
				t.Fatalf("item %d: %v", i, err)
			}
			if want := stdEncode(t, it, html); !bytes.Equal(got, want) {
				t.Fatalf("item %d (html %v):\n got %s\nwant %s", i, html, got, want)
			}
		}
	}
	// Values of other types go to encoding/json.
	other := map[string]any{"n": 3, "s": struct{ A string }{"<x>"}}
	for _, html := range []bool{false, true} {
		if got, err := Append(nil, other, html); err != nil || !bytes.Equal(got, stdEncode(t, other, html)) {
			t.Fatalf("other types (html %v): %s, %v", html, got, err)
		}
	}
	if _, err := Append(nil, map[string]any{"n": math.Inf(1)}, false); err == nil {
		t.Fatal("an infinity was encoded")
	}
}

func randomMap(rng *rand.Rand, depth int, strs []string, nums []float64) map[string]any {
	m := map[string]any{}
	for range rng.IntN(6) {
		m[strs[rng.IntN(len(strs))]+strings.Repeat("k", rng.IntN(3))] = randomValue(rng, depth, strs, nums)
	}
	return m
}

func randomValue(rng *rand.Rand, depth int, strs []string, nums []float64) any {
	switch n := rng.IntN(7); {
	case n == 0:
		return nil
	case n == 1:
		return rng.IntN(2) == 0
	case n == 2:
		return strs[rng.IntN(len(strs))]
	case n == 3:
		return nums[rng.IntN(len(nums))] * float64(1-2*rng.IntN(2))
	case n == 4 && depth > 0:
		l := make([]any, rng.IntN(4))
		for i := range l {
			l[i] = randomValue(rng, depth-1, strs, nums)
		}
		return l
	case depth > 0:
		return randomMap(rng, depth-1, strs, nums)
	}
	return rng.Float64()
}

func BenchmarkAppendStepItem(b *testing.B) {
	steps := map[string]any{}
	for _, s := range []string{"segment_prep", "format_parser", "ocr", "segment_builder", "segment_analyzer", "graph_builder", "document_summarizer"} {
		steps[s] = map[string]any{"status": "completed", "label": "A label", "started_at": "2026-11-23T16:23:01.777200029Z", "ended_at": "2026-11-23T16:23:01.813346915Z"}
	}
	it := map[string]any{"PK": "WF#01M84KFHERGQ3F606R7HFZP41Q", "SK": "STEP", "data": map[string]any{
		"document_id": "01M84KFHERGQ3F606R7H9VJD2D", "file_name": "letter-0000.txt", "pipeline": "docpipe", "pipeline_version": 1.0,
		"segments_done": 1.0, "status": "completed", "steps": steps, "total_segments": 1.0}}
	b.Run("jsonvalue", func(b *testing.B) {
		for b.Loop() {
			if _, err := Append(make([]byte, 0, 512), it, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(it); err != nil {
				b.Fatal(err)
			}
		}
	})
}
