package ai

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Clients make each provider's model over the clients they were given: the
// AWS configuration for Bedrock, the HTTP client and the key read through
// Getenv for an OpenAI-compatible endpoint.
func TestClientsMakeModelsOverTheirClients(t *testing.T) {
	ctx := context.Background()
	loads := 0
	hc := &http.Client{}
	c := Clients{
		AWS: func(context.Context) (aws.Config, error) {
			loads++
			return aws.Config{Region: "eu-west-1"}, nil
		},
		HTTP:   hc,
		Getenv: env{"KEY": "sk-1"}.get,
	}
	m, err := c.Model(ctx, ProviderBedrock, Settings{Model: "claude", MaxTokens: 7})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := m.(*Bedrock); !ok || b.ModelID != "claude" || b.MaxTokens != 7 || b.Client == nil || loads != 1 {
		t.Errorf("bedrock model %#v after %d configuration loads", m, loads)
	}
	m, err = c.Model(ctx, ProviderOpenAI, Settings{Model: "llama", BaseURL: "http://x/v1", APIKeyEnv: "KEY"})
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := m.(*OpenAI); !ok || o.APIKey != "sk-1" || o.HTTP != hc || o.BaseURL != "http://x/v1" {
		t.Errorf("openai model %#v", m)
	}
	if _, err := c.Model(ctx, ProviderOpenAI, Settings{Model: "llama", APIKeyEnv: "UNSET"}); err == nil || !strings.Contains(err.Error(), "UNSET") {
		t.Errorf("an unset key variable: %v", err)
	}
	failing := Clients{AWS: func(context.Context) (aws.Config, error) { return aws.Config{}, errors.New("no profile") }}
	if _, err := failing.Model(ctx, ProviderBedrock, Settings{Model: "claude"}); err == nil || !strings.Contains(err.Error(), "AWS configuration: no profile") {
		t.Errorf("a failed configuration: %v", err)
	}
	if _, err := (Clients{}).Model(ctx, ProviderBedrock, Settings{Model: "claude"}); err == nil {
		t.Error("Bedrock without an AWS configuration made a model")
	}
}

type env map[string]string

func (e env) get(k string) string { return e[k] }
