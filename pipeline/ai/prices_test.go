package ai

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestListPricesCoverCommonModels(t *testing.T) {
	p := ListPrices()
	for _, id := range []string{"anthropic.claude-3-haiku-20240307-v1:0", "amazon.nova-lite-v1:0", "gpt-4o-mini"} {
		if pr, ok := p[id]; !ok || pr.InputPer1K <= 0 || pr.OutputPer1K <= 0 {
			t.Errorf("%s: %+v, %v", id, pr, ok)
		}
	}
}

func TestCostByModel(t *testing.T) {
	p := Prices{"a": {InputPer1K: 0.001, OutputPer1K: 0.002}}
	dollars, unpriced := p.Cost(map[string]Usage{"a": {InputTokens: 2000, OutputTokens: 500}, "z": {InputTokens: 1}, "b": {OutputTokens: 1}})
	if math.Abs(dollars-0.003) > 1e-12 || !reflect.DeepEqual(unpriced, []string{"b", "z"}) {
		t.Fatalf("cost %g, unpriced %v", dollars, unpriced)
	}
}

func TestLoadPricesOverridesListPrices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(`{"models": {"gpt-4o-mini": {"input_per_1k": 1, "output_per_1k": 2}, "llama3.1:8b": {"input_per_1k": 0, "output_per_1k": 0}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPrices(path)
	if err != nil {
		t.Fatal(err)
	}
	if p["gpt-4o-mini"] != (Price{1, 2}) || p["llama3.1:8b"] != (Price{}) || p["gpt-4o"] != ListPrices()["gpt-4o"] {
		t.Fatalf("prices: %+v", p)
	}
	for _, bad := range []string{`{}`, `{"models": {"m": {"input_per_1k": -1}}}`, `not json`} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadPrices(path); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
