package statemachine

import (
	"embed"
	"fmt"
)

//go:embed definitions/*.asl.json
var definitions embed.FS

// Definition returns the committed, generated ASL of a mode: the exact bytes
// Terraform deploys (ModeLambda) and the engines run.
func Definition(mode Mode) ([]byte, error) {
	b, err := definitions.ReadFile("definitions/docpipe." + string(mode) + ".asl.json")
	if err != nil {
		return nil, fmt.Errorf("statemachine: no committed definition for mode %q: %w", mode, err)
	}
	return b, nil
}
