package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

// maxResultBytes bounds what show loads of one result blob into memory.
const maxResultBytes = 512 << 20

func init() { addCommand(newShowCmd) }

func newShowCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show [flags] WORKFLOW|DOCUMENT",
		Short: "Results of one analysis: text, summary, graph",
		Long: `Results of one analysis. Without a flag: its steps and the summary.
Given a document's id, the analysis is the document's latest workflow (a
backfill's, which supersedes the one before).
--text prints the document's text in segment order (an audio segment's
prefixed with when it was said, [00:30–01:00]), --summary the summary,
--graph the keyword/entity graph, --images where each page's image is (run
with --page-images png), --json everything (segments, summary, graph) as one
object. --stage NAME prints what a stage of your own pipeline answered: a
document stage's JSON, or for a segment stage one JSON line per segment
({"index": N, "output": ...}, or "error" where it failed), in order.`,
		Example: `  docpipe show WORKFLOW
  docpipe show WORKFLOW --text > document.txt
  docpipe show WORKFLOW --graph | jq '.nodes | length'
  docpipe show --stage redact WORKFLOW | jq -r .output.text
  docpipe show --table T --bucket B WORKFLOW --json`,
		Args: exactArgs(1, "one WORKFLOW or DOCUMENT"),
	}
	var o showOptions
	cmd.Flags().BoolVar(&o.text, "text", false, "print the document's text in segment order")
	cmd.Flags().BoolVar(&o.summary, "summary", false, "print the document summary")
	cmd.Flags().BoolVar(&o.graph, "graph", false, "print the keyword/entity graph (JSON)")
	cmd.Flags().BoolVar(&o.images, "images", false, "print each segment's page image (file:// or s3:// URI)")
	cmd.Flags().StringVar(&o.stage, "stage", "", "print the output of the pipeline's stage `NAME`")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return show(cmd.Context(), a, args[0], o)
	}
	return cmd
}

type showOptions struct {
	text, summary, graph, images bool
	stage                        string
}

func show(ctx context.Context, a *app, id string, o showOptions) error {
	stdout := a.stdout
	b, err := a.openSource(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	d, err := loadDetail(ctx, b.Repo, id)
	if err != nil {
		return err
	}
	ref := pipeline.WorkflowRef{ProjectID: d.Workflow.ProjectID, DocumentID: d.Workflow.DocumentID, WorkflowID: d.Workflow.ID}
	switch {
	case o.stage != "":
		return printStageOutput(ctx, b.Repo, b.Blobs, d, o.stage, stdout)
	case o.text:
		return printText(ctx, b.Repo, b.Blobs, ref, stdout)
	case o.images:
		return printImages(ctx, b, ref.WorkflowID, stdout)
	case o.graph:
		raw, err := readResult(ctx, b.Blobs, d.Progress.OutputBlobKey(ref, pipeline.GraphBlobKey(ref)))
		if err != nil {
			return err
		}
		return writeJSON(stdout, raw)
	case o.summary && !a.jsonOut:
		return printSummary(ctx, b.Blobs, d.Progress.OutputBlobKey(ref, pipeline.SummaryBlobKey(ref)), stdout)
	case a.jsonOut:
		return showJSON(ctx, b.Repo, b.Blobs, ref, d, stdout)
	}
	if err := statusDetail(ctx, b.Repo, ref.WorkflowID, false, stdout); err != nil {
		return err
	}
	// A pipeline without the summarizer has no summary to print.
	def, err := b.Repo.WorkflowDefinition(ctx, d.Workflow)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(def.Stages, func(st pipeline.Stage) bool { return st.Run.Builtin == pipeline.StepDocumentSummarizer }) {
		return nil
	}
	fmt.Fprintln(stdout)
	return printSummary(ctx, b.Blobs, d.Progress.OutputBlobKey(ref, pipeline.SummaryBlobKey(ref)), stdout)
}

// readResult loads a JSON result blob; a missing one means the step that
// writes it has not run (yet).
func readResult(ctx context.Context, blobs blob.Store, key string) (json.RawMessage, error) {
	raw, err := blob.GetBytes(ctx, blobs, key, maxResultBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, fmt.Errorf("no result yet at %s (has the workflow completed?)", key)
	}
	return raw, err
}

func printText(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, ref pipeline.WorkflowRef, w io.Writer) error {
	token := ""
	for {
		segs, next, err := repo.ListSegments(ctx, ref.WorkflowID, 500, token)
		if err != nil {
			return err
		}
		for _, s := range segs {
			if s.Index > 1 {
				fmt.Fprintln(w)
			}
			label := ""
			if s.Span != nil {
				label = spanLabel(*s.Span) + " "
			}
			rc, err := blobs.Get(ctx, s.TextKey)
			if errors.Is(err, blob.ErrNotFound) {
				fmt.Fprintf(w, "%s[segment %d has no text: %s]\n", label, s.Index, orText(s.Error, string(s.Status)))
				continue
			}
			if err != nil {
				return err
			}
			fmt.Fprint(w, label)
			_, err = io.Copy(w, rc)
			rc.Close()
			if err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
		if next == "" {
			return nil
		}
		token = next
	}
}

// spanLabel is when an audio segment was said, "[00:30–01:00]", with
// hours once the recording reaches them ("[1:00:00–1:00:30]").
func spanLabel(s extract.Span) string {
	return "[" + clock(s.StartMS) + "–" + clock(s.EndMS) + "]"
}

func clock(ms int64) string {
	sec := ms / 1000
	h, m, s := sec/3600, sec/60%60, sec%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%02d:%02d", m, s)
}

func orText(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func printSummary(ctx context.Context, blobs blob.Store, key string, w io.Writer) error {
	raw, err := readResult(ctx, blobs, key)
	if err != nil {
		return err
	}
	var s analyze.DocumentSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return stageoutput.WriteSummaryText(w, s)
}

func showJSON(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, ref pipeline.WorkflowRef, d workflowDetail, w io.Writer) error {
	out := struct {
		workflowDetail
		Segments []pipeline.Segment `json:"segments"`
		Summary  json.RawMessage    `json:"summary,omitempty"`
		Graph    json.RawMessage    `json:"graph,omitempty"`
	}{workflowDetail: d, Segments: []pipeline.Segment{}}
	if err := repo.EachSegment(ctx, ref.WorkflowID, func(s pipeline.Segment) error {
		out.Segments = append(out.Segments, s)
		return nil
	}); err != nil {
		return err
	}
	out.Summary, _ = readResult(ctx, blobs, d.Progress.OutputBlobKey(ref, pipeline.SummaryBlobKey(ref)))
	out.Graph, _ = readResult(ctx, blobs, d.Progress.OutputBlobKey(ref, pipeline.GraphBlobKey(ref)))
	return writeJSON(w, out)
}

// printImages lists each segment's page image as a URI, or why it has
// none.
func printImages(ctx context.Context, b *backend.Backend, workflowID string, w io.Writer) error {
	uri := blobURI(b)
	if uri == nil {
		uri = func(key string) string { return key }
	}
	return b.Repo.EachSegment(ctx, workflowID, func(s pipeline.Segment) error {
		if s.ImageKey == "" {
			_, err := fmt.Fprintf(w, "%d\t(no image: run with --page-images png on a PDF)\n", s.Index)
			return err
		}
		_, err := fmt.Fprintf(w, "%d\t%s\n", s.Index, uri(s.ImageKey))
		return err
	})
}
