package ai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Response formats an OpenAI-compatible endpoint may be asked for.
const (
	FormatJSONSchema = "json_schema" // structured output held to the schema (OpenAI, Ollama, llama.cpp, vLLM)
	FormatJSONObject = "json_object" // any JSON object; the schema is only instructed
	FormatNone       = "none"        // no response_format: instruct and validate
)

// OpenAI is a chat-completions endpoint that speaks OpenAI's API.
type OpenAI struct {
	BaseURL     string // up to and including /v1, e.g. http://localhost:11434/v1
	Model       string
	APIKey      string // sent as a bearer token when set; never logged
	MaxTokens   int
	Temperature *float64
	Format      string // FormatJSONSchema (default), FormatJSONObject or FormatNone
	// Attempts bounds the tries of one request on throttling, 5xx and
	// network faults (0: 3); past them the error is transient, for the
	// stage's own retry.
	Attempts int
	HTTP     *http.Client
}

// Name is the model id.
func (o *OpenAI) Name() string { return o.Model }

type oaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type oaRequest struct {
	Model          string          `json:"model"`
	Messages       []oaMessage     `json:"messages"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
	ResponseFormat json.RawMessage `json:"response_format,omitempty"`
}

type oaResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// Chat sends c to {BaseURL}/chat/completions.
func (o *OpenAI) Chat(ctx context.Context, c Chat) (Reply, error) {
	req := oaRequest{Model: o.Model, MaxTokens: o.MaxTokens, Temperature: o.Temperature}
	if c.System != "" {
		req.Messages = append(req.Messages, oaMessage{Role: "system", Content: c.System})
	}
	for _, m := range c.Messages {
		req.Messages = append(req.Messages, oaMessage{Role: m.Role, Content: m.Text})
	}
	switch o.Format {
	case "", FormatJSONSchema:
		if len(c.Schema) > 0 {
			rf, err := json.Marshal(map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "analysis", "schema": c.Schema}})
			if err != nil {
				return Reply{}, err
			}
			req.ResponseFormat = rf
		}
	case FormatJSONObject:
		req.ResponseFormat = json.RawMessage(`{"type":"json_object"}`)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Reply{}, err
	}
	url := strings.TrimRight(o.BaseURL, "/") + "/chat/completions"
	attempts := o.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	backoff := retry.NewExponentialJitterBackoff(20 * time.Second)
	for attempt := 1; ; attempt++ {
		raw, err := o.post(ctx, url, body)
		var transient *steperr.TransientError
		if errors.As(err, &transient) && attempt < attempts && ctx.Err() == nil {
			delay, derr := backoff.BackoffDelay(attempt, err)
			if derr != nil {
				return Reply{}, err
			}
			select {
			case <-ctx.Done():
				return Reply{}, &steperr.TransientError{Reason: "chat completion: " + ctx.Err().Error()}
			case <-time.After(delay):
			}
			continue
		}
		if err != nil {
			return Reply{}, err
		}
		var resp oaResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			return Reply{}, &steperr.StageFailedError{Reason: fmt.Sprintf("chat completion from %s: the response is not JSON: %v", o.Model, err)}
		}
		if len(resp.Choices) == 0 {
			return Reply{}, &steperr.StageFailedError{Reason: fmt.Sprintf("chat completion from %s: no choices in the response", o.Model)}
		}
		return Reply{
			Text:       resp.Choices[0].Message.Content,
			StopReason: resp.Choices[0].FinishReason,
			Usage:      Usage{InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens},
		}, nil
	}
}

// maxResponseBytes bounds a response read into memory.
const maxResponseBytes = 16 << 20

// post sends one request and classifies its failure.
func (o *OpenAI) post(ctx context.Context, url string, body []byte) ([]byte, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &steperr.StageFailedError{Reason: fmt.Sprintf("chat completion: %v", err)}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	client := o.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		// Timeouts, refused and dropped connections: worth another try.
		return nil, &steperr.TransientError{Reason: fmt.Sprintf("chat completion at %s: %v", url, err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, &steperr.TransientError{Reason: fmt.Sprintf("chat completion at %s: reading the response: %v", url, err)}
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, &steperr.TransientError{Reason: fmt.Sprintf("chat completion at %s: %s: %s", url, resp.Status, excerpt(raw))}
	case resp.StatusCode/100 != 2:
		return nil, &steperr.StageFailedError{Reason: fmt.Sprintf("chat completion at %s: %s: %s", url, resp.Status, excerpt(raw))}
	}
	return raw, nil
}

// excerpt is the start of an error body, on one line.
func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
