// Package ai is docpipe's contract for AI analysis: a segment's text (or a
// document's segment summaries) plus the project's document prompt go to a
// chat model, and what comes back must be one JSON object valid against the
// stage's schema. The model behind it is an interface; Bedrock's Converse
// API and any OpenAI-compatible chat-completions endpoint implement it.
//
// Nothing is truncated silently: an input over the model's context is cut
// into chunks at paragraph, line or word boundaries, each chunk is
// analysed, and the partial answers are merged by the model into one. A
// malformed answer is retried once with a message saying what was wrong,
// then fails with that reason.
package ai

import (
	"context"
	"encoding/json"
)

// Roles of a message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role string
	Text string
}

// Chat is one request to a model.
type Chat struct {
	System   string
	Messages []Message
	// Schema is the JSON schema the answer must satisfy, for models that
	// can be held to one (structured output); the system prompt states it
	// too, and the answer is validated whatever the model supports.
	Schema json.RawMessage
}

// Usage counts the tokens a model billed.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens}
}

// Reply is a model's answer.
type Reply struct {
	Text       string
	Usage      Usage
	StopReason string
}

// Model answers chats. Implementations return a *steperr.TransientError for
// what a later attempt may fix (throttling, 5xx, timeouts) and a
// *steperr.StageFailedError for what it cannot (a bad model id, no access).
type Model interface {
	Chat(ctx context.Context, c Chat) (Reply, error)
	// Name is the model id, the key of its price.
	Name() string
}
