package ai

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Models make the model of an analysis stage from its settings. The binary
// chooses them, so that a stage never builds a client of its own.
type Models interface {
	Model(ctx context.Context, p Provider, s Settings) (Model, error)
}

// Clients are Models over the clients a binary chose: Bedrock clients
// from its AWS configuration (its retry policy and request counting, as
// its other AWS clients), OpenAI-compatible endpoints through its HTTP
// client, with the API keys read from its environment.
type Clients struct {
	// AWS returns the configuration Bedrock clients are made from; nil
	// leaves Bedrock stages without a client.
	AWS func(ctx context.Context) (aws.Config, error)
	// HTTP sends the requests to OpenAI-compatible endpoints (nil: the
	// default client).
	HTTP *http.Client
	// Getenv reads the variable that holds an endpoint's API key; nil
	// reads none.
	Getenv func(string) string
}

// Model makes the model s names on p.
func (c Clients) Model(ctx context.Context, p Provider, s Settings) (Model, error) {
	switch p {
	case ProviderBedrock:
		if c.AWS == nil {
			return nil, fmt.Errorf("no AWS configuration for %s", p)
		}
		cfg, err := c.AWS(ctx)
		if err != nil {
			return nil, fmt.Errorf("AWS configuration: %v", err)
		}
		return &Bedrock{Client: NewBedrockClient(cfg, s.Region, 0), ModelID: s.Model, MaxTokens: s.MaxTokens,
			Temperature: s.Temperature, Structured: s.ResponseFormat == FormatJSONSchema}, nil
	case ProviderOpenAI:
		key := ""
		if s.APIKeyEnv != "" {
			if c.Getenv != nil {
				key = c.Getenv(s.APIKeyEnv)
			}
			if key == "" {
				return nil, fmt.Errorf("the environment variable %s that holds the API key is not set", s.APIKeyEnv)
			}
		}
		return &OpenAI{BaseURL: s.BaseURL, Model: s.Model, APIKey: key, MaxTokens: s.MaxTokens,
			Temperature: s.Temperature, Format: s.ResponseFormat, HTTP: c.HTTP}, nil
	}
	return nil, fmt.Errorf("no model client for %s", p)
}
