package sqlitetable

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/table"
)

// stdEncode is what encodeItem stands in for.
func stdEncode(t *testing.T, it table.Item) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(it); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestEncodeItemMatchesEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
		"<html> & 'apostrophes'", "ünïcödé 日本語 🎉", "line\u2028sep\u2029para", "bad \xff\xfe utf8 \xe2\x82", "ends in \xc3"}
	nums := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 123456789, 1e20, 1e21, 1.2345e300, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3}
	items := []table.Item{
		{"PK": "WF#1", "SK": "STEP", "data": map[string]any{"steps": map[string]any{"a": map[string]any{"status": "completed"}}}},
		{"PK": "p", "SK": "s", "list": []any{nil, true, false, "x", 1.5, []any{}, map[string]any{}}, "nilmap": map[string]any(nil), "nillist": []any(nil)},
	}
	for _, s := range strs {
		items = append(items, table.Item{"PK": s, "SK": "k", s: s})
	}
	for _, f := range nums {
		items = append(items, table.Item{"PK": "n", "SK": "k", "n": f, "neg": -f})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		items = append(items, table.Item(randomMap(rng, 3, strs, nums)))
	}
	for i, it := range items {
		got, err := encodeItem(it)
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		if want := stdEncode(t, it); !bytes.Equal(got, want) {
			t.Fatalf("item %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if _, err := encodeItem(table.Item{"n": math.Inf(1)}); err == nil {
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

func BenchmarkEncodeStepItem(b *testing.B) {
	steps := map[string]any{}
	for _, s := range []string{"segment_prep", "format_parser", "ocr", "segment_builder", "segment_analyzer", "graph_builder", "document_summarizer"} {
		steps[s] = map[string]any{"status": "completed", "label": "A label", "started_at": "2026-11-23T16:23:01.777200029Z", "ended_at": "2026-11-23T16:23:01.813346915Z"}
	}
	it := table.Item{"PK": "WF#01M84KFHERGQ3F606R7HFZP41Q", "SK": "STEP", "data": map[string]any{
		"document_id": "01M84KFHERGQ3F606R7H9VJD2D", "file_name": "letter-0000.txt", "pipeline": "docpipe", "pipeline_version": 1.0,
		"segments_done": 1.0, "status": "completed", "steps": steps, "total_segments": 1.0}}
	b.Run("encodeItem", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeItem(it); err != nil {
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
