package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/steps"
)

// maxResultBytes bounds what show loads of one result blob into memory.
const maxResultBytes = 512 << 20

func cmdShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var src sourceFlags
	src.register(fs)
	text := fs.Bool("text", false, "print the document's text in segment order")
	summary := fs.Bool("summary", false, "print the document summary")
	graph := fs.Bool("graph", false, "print the keyword/entity graph (JSON)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: docpipe show [flags] WORKFLOW\n\nResults of one analysis. Without a flag: overview and summary. --json prints everything (segments, summary, graph) as one object.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitError{2}
	}
	b, err := src.open(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	d, err := loadDetail(ctx, b.Repo, fs.Arg(0))
	if err != nil {
		return err
	}
	ref := pipeline.WorkflowRef{ProjectID: d.Workflow.ProjectID, DocumentID: d.Workflow.DocumentID, WorkflowID: d.Workflow.ID}
	switch {
	case *text:
		return printText(ctx, b.Repo, b.Blobs, ref, stdout)
	case *graph:
		raw, err := readResult(ctx, b.Blobs, steps.GraphKey(ref))
		if err != nil {
			return err
		}
		return writeJSON(stdout, raw)
	case *summary && !src.jsonOut:
		return printSummary(ctx, b.Blobs, ref, stdout)
	case src.jsonOut:
		return showJSON(ctx, b.Repo, b.Blobs, ref, d, stdout)
	}
	if err := statusDetail(ctx, b.Repo, ref.WorkflowID, false, stdout); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	return printSummary(ctx, b.Blobs, ref, stdout)
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
			rc, err := blobs.Get(ctx, s.TextKey)
			if errors.Is(err, blob.ErrNotFound) {
				fmt.Fprintf(w, "[segment %d has no text: %s]\n", s.Index, orText(s.Error, string(s.Status)))
				continue
			}
			if err != nil {
				return err
			}
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

func orText(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func printSummary(ctx context.Context, blobs blob.Store, ref pipeline.WorkflowRef, w io.Writer) error {
	raw, err := readResult(ctx, blobs, steps.SummaryKey(ref))
	if err != nil {
		return err
	}
	var s steps.DocumentSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return steps.WriteSummaryText(w, s)
}

func showJSON(ctx context.Context, repo *pipeline.Repository, blobs blob.Store, ref pipeline.WorkflowRef, d workflowDetail, w io.Writer) error {
	out := struct {
		workflowDetail
		Segments []pipeline.Segment `json:"segments"`
		Summary  json.RawMessage    `json:"summary,omitempty"`
		Graph    json.RawMessage    `json:"graph,omitempty"`
	}{workflowDetail: d, Segments: []pipeline.Segment{}}
	token := ""
	for {
		segs, next, err := repo.ListSegments(ctx, ref.WorkflowID, 1000, token)
		if err != nil {
			return err
		}
		out.Segments = append(out.Segments, segs...)
		if next == "" {
			break
		}
		token = next
	}
	out.Summary, _ = readResult(ctx, blobs, steps.SummaryKey(ref))
	out.Graph, _ = readResult(ctx, blobs, steps.GraphKey(ref))
	return writeJSON(w, out)
}
