package ai

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
)

// Price is what a model costs per 1,000 tokens, in US dollars.
type Price struct {
	InputPer1K  float64 `json:"input_per_1k"`
	OutputPer1K float64 `json:"output_per_1k"`
}

// Prices are prices by model id.
type Prices map[string]Price

//go:embed prices.json
var listPrices []byte

type priceFile struct {
	Note   string `json:"note,omitempty"`
	Models Prices `json:"models"`
}

// ListPrices are the embedded list prices of common Bedrock and OpenAI
// models. They are a snapshot; LoadPrices lays a user's file over them.
func ListPrices() Prices {
	p, err := parsePrices(listPrices)
	if err != nil {
		panic("ai: embedded prices.json: " + err.Error()) // checked by the tests
	}
	return p
}

// LoadPrices reads a price file (the shape of prices.json:
// {"models": {"MODEL": {"input_per_1k": x, "output_per_1k": y}}}) over the
// list prices: a model it names takes its price, the rest keep theirs.
func LoadPrices(path string) (Prices, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	over, err := parsePrices(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := ListPrices()
	maps.Copy(p, over)
	return p, nil
}

func parsePrices(raw []byte) (Prices, error) {
	var f priceFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	if len(f.Models) == 0 {
		return nil, fmt.Errorf(`no prices: want {"models": {"MODEL": {"input_per_1k": ..., "output_per_1k": ...}}}`)
	}
	for id, pr := range f.Models {
		if pr.InputPer1K < 0 || pr.OutputPer1K < 0 {
			return nil, fmt.Errorf("model %s: a price cannot be negative", id)
		}
	}
	return f.Models, nil
}

// Cost prices usage by model; unpriced lists the models without a price,
// sorted, whose tokens the total leaves out.
func (p Prices) Cost(usage map[string]Usage) (dollars float64, unpriced []string) {
	for model, u := range usage {
		pr, ok := p[model]
		if !ok {
			unpriced = append(unpriced, model)
			continue
		}
		dollars += float64(u.InputTokens)/1000*pr.InputPer1K + float64(u.OutputTokens)/1000*pr.OutputPer1K
	}
	slices.Sort(unpriced)
	return dollars, unpriced
}
