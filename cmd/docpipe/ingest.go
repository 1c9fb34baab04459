package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"text/tabwriter"
)

type ingestResult struct {
	File       string `json:"file"`
	WorkflowID string `json:"workflow_id"`
	Status     string `json:"status"`
	Existing   bool   `json:"existing"`
}

func cmdIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs)
	var aws awsIngestFlags
	aws.register(fs)
	noStart := fs.Bool("no-start", false, "local: register only; a later `docpipe run` or `docpipe work` processes them")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: docpipe ingest [flags] FILE|DIR...\n\nRegister documents and start their analysis without waiting. Locally a background `docpipe work` process runs them (log in HOME/work.log); with --bucket and --state-machine the files are uploaded to S3 and started on Step Functions.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := collectFiles(fs.Args())
	if err != nil {
		return err
	}
	var results []ingestResult
	if aws.enabled() {
		results, err = aws.ingest(ctx, f.project, files)
	} else {
		results, err = ingestLocal(ctx, f, files, stderr, !*noStart)
	}
	if err != nil {
		return err
	}
	if f.jsonOut {
		for _, r := range results {
			if err := json.NewEncoder(stdout).Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tWORKFLOW\tSTATUS")
	for _, r := range results {
		st := r.Status
		if r.Existing {
			st += " (seen before)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.File, r.WorkflowID, st)
	}
	return tw.Flush()
}

func ingestLocal(ctx context.Context, f runFlags, files []string, stderr io.Writer, start bool) ([]ingestResult, error) {
	lp, err := openLocalPipeline(ctx, f, stderr)
	if err != nil {
		return nil, err
	}
	defer lp.Close()
	var results []ingestResult
	pending := false
	for _, path := range files {
		reg, err := lp.register(ctx, f.project, path)
		if err != nil {
			return nil, err
		}
		results = append(results, ingestResult{File: path, WorkflowID: reg.Workflow.ID, Status: string(reg.Workflow.Status), Existing: reg.Existing})
		pending = pending || !finished(reg.Workflow.Status)
	}
	if start && pending {
		if err := startWorker(f); err != nil {
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
	cmd := exec.Command(self, "work", "--home", f.home, "--pdf", f.pdf, fmt.Sprintf("--concurrency=%d", f.concurrency))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
