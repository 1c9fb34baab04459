package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// stageOutputLine is one segment's entry in a segment stage's output, as
// the step runtime writes it and `show --stage` prints it.
type stageOutputLine struct {
	Index  int             `json:"index"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// printStageOutput prints what a user's stage answered for a workflow: a
// document stage's JSON, or one JSON line per segment, by index, for a
// segment stage.
func printStageOutput(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, d workflowDetail, name string, w io.Writer) error {
	wf := d.Workflow
	def, err := repo.WorkflowDefinition(ctx, wf)
	if err != nil {
		return err
	}
	version := pipeline.PipelineKey(wf.Pipeline, wf.PipelineVersion)
	st, ok := def.Stage(name)
	if !ok {
		var names []string
		for _, s := range def.Stages {
			names = append(names, s.Name)
		}
		return fmt.Errorf("pipeline %s has no stage %q; its stages: %s", version, name, strings.Join(names, ", "))
	}
	if st.Run.Kind() == pipeline.RunBuiltin {
		return fmt.Errorf("%s is the built-in %s, whose results --text, --summary, --graph and --json show", name, st.Run.Builtin)
	}
	ref := pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
	if st.Scope == pipeline.ScopeDocument {
		raw, err := blob.GetBytes(ctx, blobs, d.Progress.OutputBlobKey(ref, pipeline.StageOutputBlobKey(ref, name)), maxResultBytes)
		if err != nil {
			return noStageOutput(err, name, d)
		}
		return writeJSON(w, json.RawMessage(raw))
	}
	lines, err := stageoutput.SegmentLines(ctx, blobs, ref, name, maxResultBytes)
	if err != nil {
		return err
	}
	if len(lines) == 0 {
		return noStageOutput(blob.ErrNotFound, name, d)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(stageOutputLine{Index: l.Index, Output: l.Output, Error: l.Error}); err != nil {
			return err
		}
	}
	return nil
}

// noStageOutput explains a stage output that is not there: the stage was
// skipped, failed, or has not run.
func noStageOutput(err error, name string, d workflowDetail) error {
	if !errors.Is(err, blob.ErrNotFound) {
		return err
	}
	s, ok := d.Progress.Steps[name]
	switch {
	case !ok || s.Status == pipeline.StepPending:
		return fmt.Errorf("stage %s has not run yet", name)
	case s.Error != "":
		return fmt.Errorf("stage %s has no output: %s (%s)", name, s.Status, s.Error)
	default:
		return fmt.Errorf("stage %s has no output (%s)", name, s.Status)
	}
}
