package ai

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Bedrock is a model on Amazon Bedrock, called through the Converse API.
type Bedrock struct {
	Client      *bedrockruntime.Client
	ModelID     string
	MaxTokens   int
	Temperature *float64
	// Structured asks the model to hold its answer to the schema (Converse
	// outputConfig); only some models support it, so it is off by default
	// and the schema is instructed and validated instead.
	Structured bool
}

// NewBedrockClient is a Converse client for region from the usual AWS
// configuration (environment, shared files, role), with the SDK's
// standard retryer (which retries throttling and 5xx with backoff) given
// attempts tries.
func NewBedrockClient(cfg aws.Config, region string, attempts int) *bedrockruntime.Client {
	return bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		if region != "" {
			o.Region = region
		}
		if attempts > 0 {
			o.Retryer = retry.AddWithMaxAttempts(o.Retryer, attempts)
		}
	})
}

// Name is the model id.
func (b *Bedrock) Name() string { return b.ModelID }

// Chat sends c through Converse.
func (b *Bedrock) Chat(ctx context.Context, c Chat) (Reply, error) {
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(b.ModelID), InferenceConfig: &types.InferenceConfiguration{}}
	if b.MaxTokens > 0 {
		in.InferenceConfig.MaxTokens = aws.Int32(int32(b.MaxTokens))
	}
	if b.Temperature != nil {
		in.InferenceConfig.Temperature = aws.Float32(float32(*b.Temperature))
	}
	if c.System != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: c.System}}
	}
	for _, m := range c.Messages {
		role := types.ConversationRoleUser
		if m.Role == RoleAssistant {
			role = types.ConversationRoleAssistant
		}
		in.Messages = append(in.Messages, types.Message{Role: role, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: m.Text}}})
	}
	if b.Structured && len(c.Schema) > 0 {
		in.OutputConfig = &types.OutputConfig{TextFormat: &types.OutputFormat{
			Type:      types.OutputFormatTypeJsonSchema,
			Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{Name: aws.String("analysis"), Schema: aws.String(string(c.Schema))}},
		}}
	}
	out, err := b.Client.Converse(ctx, in)
	if err != nil {
		return Reply{}, bedrockErr(b.ModelID, err)
	}
	r := Reply{StopReason: string(out.StopReason)}
	if u := out.Usage; u != nil {
		r.Usage = Usage{InputTokens: int64(aws.ToInt32(u.InputTokens)), OutputTokens: int64(aws.ToInt32(u.OutputTokens))}
	}
	if msg, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
		var text strings.Builder
		for _, block := range msg.Value.Content {
			if t, ok := block.(*types.ContentBlockMemberText); ok {
				text.WriteString(t.Value)
			}
		}
		r.Text = text.String()
	}
	return r, nil
}

// bedrockErr classifies what is left after the SDK's retries: throttling,
// capacity and timeouts are transient (the stage's retry policy applies),
// everything else (validation, access, an unknown model) fails the stage.
func bedrockErr(model string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException", "ServiceUnavailableException", "ServiceUnavailable", "ModelNotReadyException",
			"InternalServerException", "ModelTimeoutException", "TooManyRequestsException":
			return &steperr.TransientError{Reason: fmt.Sprintf("bedrock %s: %s: %s", model, api.ErrorCode(), api.ErrorMessage())}
		}
		return &steperr.StageFailedError{Reason: fmt.Sprintf("bedrock %s: %s: %s", model, api.ErrorCode(), api.ErrorMessage())}
	}
	// Timeouts and connection faults.
	return &steperr.TransientError{Reason: fmt.Sprintf("bedrock %s: %v", model, err)}
}
