package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

func init() { addCommand(newPipelineCmd) }

func newPipelineCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Validate, store and inspect pipeline versions",
		Long: `A pipeline file describes the stages a document goes through. Applying it
stores an immutable version (NAME@1, NAME@2, ...); workflows record the
version they run and keep it, whatever is applied later.

Locally versions live under --home; with --table they live in DynamoDB.`,
		Example: `  docpipe pipeline validate samples/pipelines/*/pipeline.yaml
  docpipe pipeline apply samples/pipelines/redact/pipeline.yaml
  docpipe pipeline show redact@1`,
		Args: commandGroupArgs,
	}
	cmd.AddCommand(newPipelineValidateCmd(a), newPipelineApplyCmd(a), newPipelineListCmd(a),
		newPipelineShowCmd(a), newPipelineHistoryCmd(a), newPipelineDiffCmd(a))
	return cmd
}

func newPipelineValidateCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate [flags] FILE...",
		Short: "Check pipeline files and report every problem at its file:line",
		Example: `  docpipe pipeline validate pipeline.yaml
  docpipe pipeline validate --target aws samples/pipelines/*/pipeline.yaml`,
		Args: minArgs(1, "at least one pipeline FILE"),
	}
	target := cmd.Flags().String("target", string(pipelinefile.TargetEmbedded), "where the pipeline will run: embedded or aws")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		t := pipelinefile.Target(*target)
		if t != pipelinefile.TargetEmbedded && t != pipelinefile.TargetAWS {
			return usageErrorf("--target is embedded or aws, not %q", *target)
		}
		bad := false
		for _, path := range args {
			if _, err := loadPipeline(path, t); err != nil {
				fmt.Fprintln(a.stderr, err)
				bad = true
				continue
			}
			fmt.Fprintf(a.stdout, "%s: ok\n", path)
		}
		if bad {
			return exitError{1}
		}
		return nil
	}
	return cmd
}

// loadPipeline reads and validates a pipeline file for target.
func loadPipeline(path string, target pipelinefile.Target) (pipeline.Definition, error) {
	def, err := pipelinefile.Load(path)
	if err != nil {
		return def, err
	}
	return def, pipelinefile.Validate(def, target)
}

func newPipelineApplyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "apply [flags] FILE",
		Short: "Validate a pipeline file and store it as the pipeline's next version",
		Long: `Validate a pipeline file, then store it as the next version of its pipeline
and make that version current. A file whose content equals the current
version stores nothing. Prints NAME@VERSION (new) or (unchanged).

On AWS (--table) the file is validated for AWS, and the version gets a state
machine of its own beside the deployment's state machine (--state-machine),
<deployment>-NAME-vVERSION, generated in its task mode and run with its role; its ARN
is recorded on the version, and documents of the pipeline start on it.`,
		Example: `  docpipe pipeline apply samples/pipelines/redact/pipeline.yaml
  docpipe pipeline apply --table T --bucket B --state-machine ARN pipeline.yaml`,
		Args: exactArgs(1, "one pipeline FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer b.Close()
			applied, err := applyPipelineFile(cmd.Context(), a, b, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, applied)
			return nil
		},
	}
}

func newPipelineListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Stored pipelines and their current versions",
		Example: `  docpipe pipeline list
  docpipe pipeline list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var list []pipeline.PipelineSummary
			b, err := a.openSource(cmd.Context())
			switch {
			case noState(err):
			case err != nil:
				return err
			default:
				defer b.Close()
				if list, err = b.Repo.ListPipelines(cmd.Context()); err != nil {
					return err
				}
			}
			if a.jsonOut {
				if list == nil {
					list = []pipeline.PipelineSummary{}
				}
				return writeJSON(a.stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(a.stdout, "no pipelines stored; `docpipe pipeline apply FILE` stores one")
				return nil
			}
			t := newTextTable(a.stdout, "PIPELINE", "VERSION", "UPDATED", "DESCRIPTION")
			for _, p := range list {
				t.row(p.Name, p.Version, localTime(pipeline.FormatTime(p.UpdatedAt)), p.Description)
			}
			return t.flush()
		},
	}
}

func newPipelineShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show [flags] NAME[@VERSION]",
		Short: "Every stage of a pipeline version (the current one without @VERSION)",
		Example: `  docpipe pipeline show redact
  docpipe pipeline show redact@1 --json`,
		Args: exactArgs(1, "one NAME[@VERSION]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, version, err := parsePipelineRef(args[0])
			if err != nil {
				return err
			}
			b, err := a.openSource(cmd.Context())
			if err != nil {
				return err
			}
			defer b.Close()
			v, err := b.Repo.GetPipeline(cmd.Context(), name, version)
			if err != nil {
				return notFoundHint(err, "pipeline "+args[0], listHint)
			}
			if a.jsonOut {
				return writeJSON(a.stdout, struct {
					pipeline.PipelineVersion
					Definition pipeline.Definition `json:"definition"`
				}{v, v.Definition.Redacted()})
			}
			return printPipeline(a.stdout, v)
		},
	}
}

func printPipeline(w io.Writer, v pipeline.PipelineVersion) error {
	fmt.Fprintf(w, "%s  %s\ncreated %s, content %s\nbatch size %d, max concurrency %d\n\n",
		v, v.Description, localTime(pipeline.FormatTime(v.CreatedAt)), v.ContentHash[:12],
		v.Definition.BatchSize, v.Definition.MaxConcurrency)
	t := newTextTable(w, "STAGE", "SCOPE", "NEEDS", "RUN", "WHEN", "TIMEOUT", "RETRY")
	for _, st := range v.Definition.Stages {
		t.row(st.Name, st.Scope, orDash(strings.Join(st.Needs, ",")),
			st.Run, st.When, fmt.Sprintf("%ds", st.TimeoutSeconds), st.RetryText())
	}
	return t.flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newPipelineHistoryCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "history [flags] NAME",
		Short: "A pipeline's versions, newest first",
		Example: `  docpipe pipeline history redact
  docpipe pipeline history redact --json`,
		Args: exactArgs(1, "one pipeline NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.openSource(cmd.Context())
			if err != nil {
				return err
			}
			defer b.Close()
			hist, err := b.Repo.PipelineHistory(cmd.Context(), args[0])
			if err != nil {
				return notFoundHint(err, "pipeline "+args[0], listHint)
			}
			if a.jsonOut {
				return writeJSON(a.stdout, hist)
			}
			t := newTextTable(a.stdout, "VERSION", "CREATED", "STAGES", "CONTENT", "DESCRIPTION")
			for _, v := range hist {
				t.row(v, localTime(pipeline.FormatTime(v.CreatedAt)), v.Stages, v.ContentHash[:12], v.Description)
			}
			return t.flush()
		},
	}
}

func newPipelineDiffCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "diff NAME@A NAME@B",
		Short: "A unified diff of two versions, as pipeline files",
		Long: `Print a unified diff of two stored versions, each written out as a pipeline
file with every setting spelled out. Without @VERSION a side is the current
version. Exit status 0 either way.`,
		Example: `  docpipe pipeline diff redact@1 redact@2
  docpipe pipeline diff redact@1 redact`,
		Args: exactArgs(2, "two NAME@VERSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.openSource(cmd.Context())
			if err != nil {
				return err
			}
			defer b.Close()
			var sides [2]pipeline.PipelineVersion
			for i, arg := range args {
				name, version, err := parsePipelineRef(arg)
				if err != nil {
					return err
				}
				if sides[i], err = b.Repo.GetPipeline(cmd.Context(), name, version); err != nil {
					return notFoundHint(err, "pipeline "+arg, listHint)
				}
			}
			text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
				A:        difflib.SplitLines(string(pipelinefile.Format(sides[0].Definition.Redacted()))),
				B:        difflib.SplitLines(string(pipelinefile.Format(sides[1].Definition.Redacted()))),
				FromFile: sides[0].String(),
				ToFile:   sides[1].String(),
				Context:  3,
			})
			if err != nil {
				return err
			}
			if text == "" {
				fmt.Fprintf(a.stdout, "%s and %s are the same\n", sides[0], sides[1])
				return nil
			}
			_, err = io.WriteString(a.stdout, text)
			return err
		},
	}
}

// parsePipelineRef splits NAME[@VERSION]; no version is 0, the current one.
func parsePipelineRef(s string) (string, int, error) {
	name, ver, found := strings.Cut(s, "@")
	if name == "" {
		return "", 0, usageErrorf("%q names no pipeline: write NAME or NAME@VERSION", s)
	}
	if !found {
		return name, 0, nil
	}
	v, err := strconv.Atoi(ver)
	if err != nil || v < 1 {
		return "", 0, usageErrorf("%q: the version after @ is a number from 1", s)
	}
	return name, v, nil
}

// openStore opens the state for a command that writes it: on AWS the
// table, locally --home, created when missing.
func (a *app) openStore(ctx context.Context) (*backend.Backend, error) {
	if a.onAWS() {
		return backend.OpenAWS(ctx, backend.AWSOptions{Table: a.table, Bucket: a.bucket})
	}
	if err := os.MkdirAll(a.home, 0o755); err != nil {
		return nil, err
	}
	return backend.OpenLocal(a.home)
}

const listHint = "`docpipe pipeline list` shows the stored pipelines, `docpipe pipeline history NAME` their versions"

// notFoundHint turns a missing item into a message that says what to do.
func notFoundHint(err error, what, hint string) error {
	if errors.Is(err, pipeline.ErrNotFound) {
		return fmt.Errorf("%s not found; %s", what, hint)
	}
	return err
}

// pipelineStatus is `status --pipeline NAME`: the pipeline's workflows,
// newest first, from the pipeline index.
func pipelineStatus(ctx context.Context, a *app, name string, limit int) error {
	b, err := a.openSource(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	var list []pipeline.Workflow
	token := ""
	for {
		page, next, err := b.Repo.ListPipelineWorkflows(ctx, name, limit, token)
		if err != nil {
			return err
		}
		list = append(list, page...)
		if next == "" || limit > 0 && len(list) >= limit {
			break
		}
		token = next
	}
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	if a.jsonOut {
		if list == nil {
			list = []pipeline.Workflow{}
		}
		return writeJSON(a.stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintf(a.stdout, "no workflows run pipeline %s\n", name)
		return nil
	}
	t := newTextTable(a.stdout, "WORKFLOW", "FILE", "PIPELINE", "STATUS", "CREATED", "ERROR")
	for _, wf := range list {
		t.row(wf.ID, wf.FileName, fmt.Sprintf("%s@%d", wf.Pipeline, wf.PipelineVersion), wf.Status,
			localTime(pipeline.FormatTime(wf.CreatedAt)), wf.Error)
	}
	return t.flush()
}
