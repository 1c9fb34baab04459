package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline/search"
)

func init() { addCommand(newSearchCmd) }

func newSearchCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "search [flags] QUERY",
		Short: "Full-text search over the segments and outputs of completed analyses",
		Long: `Search the text of every segment of each document's latest completed
analysis, and what its stages found: keywords, entities, summaries and
the JSON users' stages answered. Hits come best first (bm25), with a
snippet, the page or section, the file and the workflow.

QUERY is FTS5 syntax: words (all must match), "a phrase", a prefix*,
AND, OR, NOT and parentheses, and FIELD: word for one of body,
keywords, entities, summary, outputs.

The index lives in the local state file and is written with each
analysis's completion; --reindex rebuilds it (for analyses completed
before search existed). On AWS there is no index: export to S3 with
` + "`docpipe export --out s3://...`" + ` and load that into a search service.`,
		Example: `  docpipe search invoice
  docpipe search '"payment terms" AND net*' --project contracts
  docpipe search 'entities: 2024*' --json --limit 5
  docpipe search --reindex`,
		Args: func(cmd *cobra.Command, args []string) error {
			if reindex, _ := cmd.Flags().GetBool("reindex"); reindex {
				return maxArgs(0, "no QUERY with --reindex")(cmd, args)
			}
			return exactArgs(1, "one QUERY (quote it when it has spaces)")(cmd, args)
		},
	}
	pipe := cmd.Flags().String("pipeline", "", "only analyses run by this pipeline (NAME)")
	limit := cmd.Flags().Int("limit", search.DefaultLimit, "at most this many hits")
	reindex := cmd.Flags().Bool("reindex", false, "rebuild the index from the state and the blob store")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if a.onAWS() {
			return usageErrorf("there is no search index on AWS (a DynamoDB table is named: --table or %s): "+
				"export the results with `docpipe export --table T --bucket B --out s3://BUCKET/PREFIX/` and load them into OpenSearch or query them with Athena", backend.EnvTable)
		}
		if *limit < 1 {
			return usageErrorf("--limit must be at least 1")
		}
		project := ""
		if f := cmd.Flag("project"); f.Changed || os.Getenv(backend.EnvProject) != "" {
			project = a.project
		}
		if *reindex {
			return reindexSearch(cmd.Context(), a)
		}
		return runSearch(cmd.Context(), a, search.Query{Text: args[0], Project: project, Pipeline: *pipe, Limit: *limit})
	}
	return cmd
}

func runSearch(ctx context.Context, a *app, q search.Query) error {
	if strings.TrimSpace(q.Text) == "" {
		return usageErrorf("the search query is empty")
	}
	b, err := a.openSource(ctx)
	if noState(err) {
		return printHits(a, q, nil)
	}
	if err != nil {
		return err
	}
	defer b.Close()
	res, err := b.Search.Search(ctx, q)
	var bad *search.BadQueryError
	if errors.As(err, &bad) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if res.Capped {
		fmt.Fprintf(a.stderr, "more than %d segments match: these are the best of the %d most recently indexed; more words, --project or --pipeline rank them all\n", res.Ranked, res.Ranked)
	}
	hits := res.Hits
	if len(hits) == 0 && !a.jsonOut {
		if empty, err := b.Search.Empty(ctx); err == nil && empty {
			fmt.Fprintln(a.stderr, "nothing is indexed yet: analyses are indexed as they complete; `docpipe search --reindex` indexes those completed before")
		}
	}
	if unindexed, err := b.Search.Unindexed(ctx); err == nil && len(unindexed) > 0 {
		fmt.Fprintf(a.stderr, "%d completed analyses are not in the index (their results could not be read); `docpipe search --reindex` tries again\n", len(unindexed))
	}
	return printHits(a, q, hits)
}

func printHits(a *app, q search.Query, hits []search.Hit) error {
	if a.jsonOut {
		if hits == nil {
			hits = []search.Hit{}
		}
		enc := json.NewEncoder(a.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(hits)
	}
	if len(hits) == 0 {
		fmt.Fprintf(a.stdout, "no matches for %s\n", printable(q.Text))
		return nil
	}
	for i, h := range hits {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		fmt.Fprintf(a.stdout, "%s  %s  %s  (workflow %s, %s@%d)\n", printable(h.FileName), h.Where(), h.Field, h.WorkflowID, printable(h.Pipeline), h.PipelineVersion)
		fmt.Fprintf(a.stdout, "    %s\n", printable(h.Snippet))
	}
	return nil
}

func reindexSearch(ctx context.Context, a *app) error {
	b, err := a.openSource(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	n, err := b.Search.Reindex(ctx, b.Repo)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "indexed %d analyses\n", n)
	unindexed, err := b.Search.Unindexed(ctx)
	if err != nil {
		return err
	}
	for wf, reason := range unindexed {
		fmt.Fprintf(a.stderr, "not indexed: %s: %s\n", wf, reason)
	}
	if len(unindexed) > 0 {
		return exitError{1}
	}
	return nil
}
