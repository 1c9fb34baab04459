package pipelinefile_test

import (
	"fmt"

	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

// A pipeline file lists the stages after the ingestion head, which Parse
// adds in front; it reports every problem of shape at once, each at
// file:line, and Validate checks the rest against where it will run.
func Example() {
	file := []byte(`name: redact
stages:
  - name: redact
    scope: segment
    needs: [segment_builder]
    run: {command: [python3, redact.py], batch: true}
    settings: {labels: [iban]}
  - name: segment_analyzer
    needs: [redact]
    run: {builtin: segment_analyzer}
`)
	def, err := pipelinefile.Parse("pipeline.yaml", file)
	if err != nil {
		panic(err)
	}
	for _, st := range def.Stages {
		fmt.Println(st.Name, st.Scope)
	}
	fmt.Println("valid for AWS:", pipelinefile.Validate(def, pipelinefile.TargetAWS) == nil)

	_, err = pipelinefile.Parse("bad.yaml", []byte("name: bad\nstages:\n  - name: x\n    rn: {builtin: ocr}\n"))
	fmt.Println(err)
	// Output:
	// segment_prep document
	// format_parser document
	// ocr document
	// segment_builder document
	// redact segment
	// segment_analyzer segment
	// valid for AWS: true
	// bad.yaml:4: stage "x": unknown key "rn" (want one of name, label, scope, needs, run, timeout, retry, when, settings, env, cache)
}
