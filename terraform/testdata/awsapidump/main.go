// Command awsapidump prints the IAM actions of each Lambda binary's list in
// cmd/internal/awsapi as JSON. Go lets only packages under cmd/ import
// cmd/internal/..., so terraform_test.go compiles this file as if it were
// cmd/internal/awsapidump (go run -overlay) instead of re-implementing the
// lists' semantics.
package main

import (
	"encoding/json"
	"os"

	"github.com/docpipe/docpipe/cmd/internal/awsapi"
)

func main() {
	out := map[string][]string{
		"steps":  awsapi.IAMActions(awsapi.Steps),
		"ingest": awsapi.IAMActions(awsapi.Ingest),
		"relay":  awsapi.IAMActions(awsapi.Relay),
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}
