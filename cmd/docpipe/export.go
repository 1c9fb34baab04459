package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/s3blob"
	"github.com/docpipe/docpipe/pipeline/export"
)

func init() { addCommand(newExportCmd) }

func newExportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export [flags]",
		Short: "Write every document's latest completed analysis as JSON Lines or Markdown",
		Long: `Write the results of the documents of a project (--project), or of every
project: for each document its latest completed analysis, segment by segment, with the document's id, file name
and URI, the workflow, pipeline@version, the page or section, the
Markdown heading path, the audio span, the text and the stage outputs.

--format markdown writes a file per document with its headings and a
comment at each segment boundary. --chunk-tokens N cuts each document's
text into chunks of at most N tokens (counted as max(words,
characters/4)) for retrieval: a chunk never spans two documents or two
sections, keeps a table or code block whole when it fits, and names the
segments it comes from; --overlap M repeats M tokens of a section's
previous chunk.

--out names a file, a directory (existing, or ending in /) or
s3://BUCKET/PREFIX/. A directory or S3 gets the partitioned layout
project=P/date=YYYY-MM-DD/part-RUN-00001.jsonl (the completion date; one
document.md per document for Markdown), which Athena, Glue and OpenSearch
ingestion read as it is. Without --out the rows go to standard output.
With --table and --bucket it reads DynamoDB and S3.`,
		Example: `  docpipe export > results.jsonl
  docpipe export --format markdown --out exported/
  docpipe export --pipeline redact@1 --since 2025-01-01 --chunk-tokens 512 --overlap 64 --out chunks.jsonl
  docpipe export --table T --bucket B --out s3://analytics/docpipe/`,
		Args: maxArgs(0, "no arguments (the project's documents are exported)"),
	}
	var o exportFlags
	cmd.Flags().StringVar(&o.pipeline, "pipeline", "", "only analyses of this pipeline: NAME or NAME@VERSION")
	cmd.Flags().StringVar(&o.since, "since", "", "only analyses completed since: a date (2025-01-31), a time (RFC 3339) or a duration ago (24h)")
	cmd.Flags().StringVar(&o.format, "format", "jsonl", "jsonl or markdown")
	cmd.Flags().IntVar(&o.chunkTokens, "chunk-tokens", 0, "cut each document into chunks of at most this many tokens (0: a row per segment)")
	cmd.Flags().IntVar(&o.overlap, "overlap", 0, "with --chunk-tokens: tokens a chunk repeats from the one before it in the same section")
	cmd.Flags().StringVar(&o.out, "out", "", "FILE, DIR/ or s3://BUCKET/PREFIX/ (default: standard output)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if f := cmd.Flag("project"); f.Changed || os.Getenv(backend.EnvProject) != "" {
			o.project = a.project
		}
		return runExport(cmd.Context(), a, o)
	}
	return cmd
}

type exportFlags struct {
	project                      string // "" for every project
	pipeline, since, format, out string
	chunkTokens, overlap         int
}

// parseSince reads --since relative to now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usageErrorf("--since %q: write a date (2025-01-31), a time (2025-01-31T12:00:00Z) or a duration ago (24h)", s)
}

func runExport(ctx context.Context, a *app, o exportFlags) error {
	f := export.Filter{Project: o.project}
	var err error
	if o.pipeline != "" {
		if f.Pipeline, f.Version, err = parsePipelineRef(o.pipeline); err != nil {
			return err
		}
	}
	if f.Since, err = parseSince(o.since, time.Now()); err != nil {
		return err
	}
	if o.format != "jsonl" && o.format != "markdown" {
		return usageErrorf("--format %q: choose jsonl or markdown", o.format)
	}
	switch {
	case o.chunkTokens < 0 || o.overlap < 0:
		return usageErrorf("--chunk-tokens and --overlap count tokens: 0 or more")
	case o.overlap > 0 && o.chunkTokens == 0:
		return usageErrorf("--overlap is the overlap of chunks: give --chunk-tokens too")
	case o.chunkTokens > 0 && o.overlap >= o.chunkTokens:
		return usageErrorf("--overlap %d must be less than --chunk-tokens %d", o.overlap, o.chunkTokens)
	}
	b, err := a.openSource(ctx)
	if noState(err) {
		return err
	}
	if err != nil {
		return err
	}
	defer b.Close()
	sink, where, err := exportSink(ctx, a, o)
	if err != nil {
		return err
	}
	st, err := export.Run(ctx, export.Source{Repo: b.Repo, Blobs: b.Blobs}, f, export.Options{ChunkTokens: o.chunkTokens, Overlap: o.overlap}, sink)
	if err != nil {
		return err
	}
	if where != "" {
		fmt.Fprintf(a.stderr, "exported %d documents (%d rows) to %s\n", st.Documents, st.Rows, where)
	}
	return nil
}

// exportSink is where --out and --format send the rows, and how to name
// it ("" for standard output).
func exportSink(ctx context.Context, a *app, o exportFlags) (export.Sink, string, error) {
	var files export.Files
	switch {
	case o.out == "" || o.out == "-":
		if o.format == "markdown" {
			return &export.Markdown{W: a.stdout}, "", nil
		}
		return &export.JSONLines{W: a.stdout}, "", nil
	case strings.HasPrefix(o.out, "s3://"):
		bucket, prefix, _ := strings.Cut(strings.TrimPrefix(o.out, "s3://"), "/")
		if bucket == "" {
			return nil, "", usageErrorf("--out %q names no bucket: write s3://BUCKET/PREFIX/", o.out)
		}
		if prefix != "" && !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		cfg, err := backend.LoadAWSConfig(ctx, nil)
		if err != nil {
			return nil, "", err
		}
		store, err := s3blob.New(backend.NewAWSClients(cfg).S3, bucket)
		if err != nil {
			return nil, "", err
		}
		files = export.BlobFiles{Store: store, Prefix: prefix}
	case strings.HasSuffix(o.out, "/") || isDir(o.out):
		files = export.Dir(o.out)
	default:
		if o.format == "markdown" {
			return nil, "", usageErrorf("--format markdown writes a file per document: --out names a directory (DIR/) or s3://BUCKET/PREFIX/")
		}
		return &fileJSONLines{path: o.out}, o.out, nil
	}
	if o.format == "markdown" {
		return &export.Markdown{Files: files}, o.out, nil
	}
	return &export.PartitionedJSONLines{Files: files, Run: pipeline.NewID()}, o.out, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// fileJSONLines is JSON Lines to a file, created when the first document
// begins (an export that fails to open its source leaves no file) and
// written in place of an earlier one only when complete.
type fileJSONLines struct {
	path string
	f    *os.File
	export.JSONLines
}

func (s *fileJSONLines) Begin(ctx context.Context, wf pipeline.Workflow) error {
	if s.f != nil {
		return nil
	}
	f, err := os.CreateTemp(dirOf(s.path), ".docpipe-export-*")
	if err != nil {
		return err
	}
	s.f, s.W = f, f
	return nil
}

func (s *fileJSONLines) Close(context.Context) error {
	if s.f == nil { // nothing exported: an empty file
		return os.WriteFile(s.path, nil, 0o644)
	}
	if err := s.f.Close(); err != nil {
		return err
	}
	return os.Rename(s.f.Name(), s.path)
}

func dirOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i+1]
	}
	return "."
}
