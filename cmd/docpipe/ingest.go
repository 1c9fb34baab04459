package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/localrun"
)

type ingestResult struct {
	File       string `json:"file"`
	WorkflowID string `json:"workflow_id"`
	Status     string `json:"status"`
	Existing   bool   `json:"existing"`
	Error      string `json:"error,omitempty"` // why a file was not processed
}

func init() { addCommand(newIngestCmd) }

func newIngestCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ingest [flags] FILE|DIR...",
		Short: "Register documents and start them without waiting",
		Long: `Register documents and start their analysis without waiting.

Locally a background ` + "`docpipe work`" + ` process runs them (its log is HOME/work.log).
With --table (or ` + backend.EnvTable + `), --bucket and --state-machine the files are
uploaded to S3 under --incoming-prefix and started on Step Functions, with the
same workflow id the bucket's upload event gives, so the two never double-start.

Files that cannot be read as documents are listed as "not processed" and make
the exit status 1.`,
		Example: `  docpipe ingest samples/docs
  docpipe ingest --no-start notes.md && docpipe work
  docpipe ingest --table T --bucket B --state-machine ARN report.pdf`,
		Args: minArgs(1, "at least one FILE or DIR"),
	}
	f := newRunFlags(a, cmd.Flags())
	f.web = addWebFlags(cmd.Flags())
	prefix := cmd.Flags().String("incoming-prefix", envOr(backend.EnvIncomingPrefix, backend.DefaultIncomingPrefix), "AWS: key prefix uploads go under [$"+backend.EnvIncomingPrefix+"]")
	noStart := cmd.Flags().Bool("no-start", false, "local: register only; a later `docpipe run` or `docpipe work` processes them")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return ingest(cmd.Context(), f, *prefix, !*noStart, args)
	}
	return cmd
}

func ingest(ctx context.Context, f *runFlags, prefix string, start bool, args []string) error {
	files, skipped, err := collectSources(args)
	if err != nil {
		return err
	}
	var results []ingestResult
	switch {
	case len(files) == 0:
	case f.onAWS() && slices.ContainsFunc(files, localrun.IsURL):
		return fmt.Errorf("URLs are fetched on the embedded default only; save the pages and ingest the files")
	case f.onAWS():
		results, err = awsIngest{app: f.app, prefix: prefix, pipeline: f.pipeline}.ingest(ctx, files)
	default:
		results, err = ingestLocal(ctx, f, files, f.stderr, start)
	}
	if err != nil {
		return err
	}
	for _, s := range skipped {
		results = append(results, ingestResult{File: s.Path, Status: statusNotProcessed, Error: s.Reason})
	}
	if err := printIngested(f.stdout, results, f.jsonOut); err != nil {
		return err
	}
	if slices.ContainsFunc(results, func(r ingestResult) bool { return r.Status == statusNotProcessed }) {
		return exitError{1}
	}
	return nil
}

func printIngested(w io.Writer, results []ingestResult, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range results {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	t := newTextTable(w, "FILE", "WORKFLOW", "STATUS")
	for _, r := range results {
		st := r.Status
		switch {
		case r.Existing:
			st += " (seen before)"
		case r.Error != "":
			st += ": " + r.Error
		}
		t.row(r.File, r.WorkflowID, st)
	}
	return t.flush()
}

func ingestLocal(ctx context.Context, f *runFlags, files []string, stderr io.Writer, start bool) ([]ingestResult, error) {
	lp, err := openLocalPipeline(ctx, f, stderr)
	if err != nil {
		return nil, err
	}
	defer lp.Close()
	outcomes, err := lp.runtime(nil).Register(ctx, files)
	if err != nil {
		return nil, err
	}
	results := make([]ingestResult, len(outcomes))
	pending := false
	for i, o := range outcomes {
		if o.NotProcessed != "" {
			results[i] = ingestResult{File: o.File, Status: statusNotProcessed, Error: o.NotProcessed}
			continue
		}
		reg := o.Registration
		results[i] = ingestResult{File: o.File, WorkflowID: reg.Workflow.ID, Status: string(reg.Workflow.Status), Existing: reg.Existing}
		pending = pending || !reg.Workflow.Status.Final()
	}
	if start && pending {
		if err := f.startWorker(*f); err != nil {
			return nil, fmt.Errorf("registered, but could not start the background worker (run `docpipe work --home %s`): %w", f.home, err)
		}
	}
	return results, nil
}

// startWorker launches `docpipe work` detached from this process, so the
// analysis goes on after ingest returns.
func startWorker(f runFlags) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(f.home, "work.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(self, "work", "--home", f.home, "--pdf", f.pdf, "--page-images", f.pageImages, fmt.Sprintf("--concurrency=%d", f.concurrency))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
