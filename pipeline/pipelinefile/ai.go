package pipelinefile

import (
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
)

// AIProvider is the model service an AI analysis builtin calls; ok is
// false for any other builtin.
func AIProvider(builtin string) (p ai.Provider, ok bool) {
	switch builtin {
	case pipeline.BuiltinBedrockAnalyzer:
		return ai.ProviderBedrock, true
	case pipeline.BuiltinOpenAIAnalyzer:
		return ai.ProviderOpenAI, true
	}
	return "", false
}
