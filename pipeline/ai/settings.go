package ai

import (
	"fmt"
	"slices"
	"strings"
)

// Provider is the kind of model service an analysis calls.
type Provider string

const (
	ProviderBedrock Provider = "Amazon Bedrock"
	ProviderOpenAI  Provider = "an OpenAI-compatible endpoint"
)

// Settings are an analysis stage's settings in the pipeline file.
type Settings struct {
	Model         string
	Region        string   // Bedrock; "" is the AWS configuration's region
	BaseURL       string   // OpenAI-compatible: up to and including /v1
	APIKeyEnv     string   // OpenAI-compatible: the environment variable holding the key
	MaxTokens     int      // the answer's token limit (0: the model's default)
	Temperature   *float64 // nil: the model's default
	ContextTokens int      // input budget of one request (0: DefaultContextTokens)
	// ResponseFormat is FormatJSONSchema, FormatJSONObject or FormatNone for
	// OpenAI-compatible endpoints; Bedrock takes FormatJSONSchema (the
	// model supports structured output) or FormatNone (the default).
	ResponseFormat string
	Schema         *Schema
}

// Problem is a setting that is wrong; Key is "" for the settings as a whole.
type Problem struct {
	Key string
	Msg string
}

var knownSettings = map[Provider][]string{
	ProviderBedrock: {"model", "region", "max_tokens", "temperature", "context_tokens", "response_format", "schema"},
	ProviderOpenAI:  {"model", "base_url", "api_key_env", "max_tokens", "temperature", "context_tokens", "response_format", "schema"},
}

// ParseSettings reads the settings of an analysis on provider and
// reports every problem, in key order.
func ParseSettings(provider Provider, m map[string]any) (Settings, []Problem) {
	var s Settings
	var probs []Problem
	bad := func(key, format string, args ...any) {
		probs = append(probs, Problem{key, fmt.Sprintf(format, args...)})
	}
	known := knownSettings[provider]
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	str := func(k string, v any) string {
		x, ok := v.(string)
		if !ok || x == "" {
			bad(k, "setting %s must be a non-empty string", k)
		}
		return x
	}
	count := func(k string, v any) int {
		x, ok := v.(int)
		if f, isFloat := v.(float64); isFloat && f == float64(int(f)) {
			x, ok = int(f), true // a stored definition went through JSON
		}
		if !ok || x <= 0 {
			bad(k, "setting %s must be a positive whole number", k)
		}
		return x
	}
	for _, k := range keys {
		v := m[k]
		switch {
		case !slices.Contains(known, k):
			bad(k, "unknown setting %q for an analysis on %s (want one of %s)", k, provider, strings.Join(known, ", "))
		case k == "model":
			s.Model = str(k, v)
		case k == "region":
			s.Region = str(k, v)
		case k == "base_url":
			s.BaseURL = str(k, v)
			if s.BaseURL != "" && !strings.HasPrefix(s.BaseURL, "http://") && !strings.HasPrefix(s.BaseURL, "https://") {
				bad(k, "base_url must be an http:// or https:// URL, got %q", s.BaseURL)
			}
		case k == "api_key_env":
			s.APIKeyEnv = str(k, v)
		case k == "max_tokens":
			s.MaxTokens = count(k, v)
		case k == "context_tokens":
			s.ContextTokens = count(k, v)
		case k == "temperature":
			var t float64
			switch x := v.(type) {
			case int:
				t = float64(x)
			case float64:
				t = x
			default:
				bad(k, "setting temperature must be a number")
			}
			if t < 0 || t > 2 {
				bad(k, "temperature must be between 0 and 2, got %g", t)
			}
			s.Temperature = &t
		case k == "response_format":
			s.ResponseFormat = str(k, v)
			allowed := []string{FormatJSONSchema, FormatJSONObject, FormatNone}
			if provider == ProviderBedrock {
				allowed = []string{FormatJSONSchema, FormatNone}
			}
			if !slices.Contains(allowed, s.ResponseFormat) {
				bad(k, "response_format must be one of %s, got %q", strings.Join(allowed, ", "), s.ResponseFormat)
			}
		case k == "schema":
			obj, ok := v.(map[string]any)
			if !ok {
				bad(k, "schema must be a mapping: a JSON schema of the answer object")
				continue
			}
			sch, err := NewSchema(obj)
			if err != nil {
				bad(k, "%v", err)
			}
			s.Schema = sch
		}
	}
	if _, ok := m["model"]; !ok {
		bad("", "an analysis on %s needs settings: {model: ...}", provider)
	}
	if _, ok := m["base_url"]; !ok && provider == ProviderOpenAI {
		bad("", "an analysis on %s needs settings: {base_url: ...}, e.g. http://localhost:11434/v1", provider)
	}
	if s.Schema == nil {
		s.Schema = DefaultSchema()
	}
	return s, probs
}
